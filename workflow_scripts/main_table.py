"""Snakemake adapter: rule main_table -> gold_textgen.tables."""

from gold_textgen.logs import log_to_file
from gold_textgen.tables import load_scores, seed_table, write_table

with log_to_file(snakemake.log[0]):
    write_table(seed_table(load_scores(snakemake.input)), snakemake.output.csv, snakemake.output.markdown)
