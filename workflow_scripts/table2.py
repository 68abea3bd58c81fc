"""Snakemake adapter: rule table2 -> gold_textgen.tables.table2."""

from gold_textgen.logs import log_to_file
from gold_textgen.tables import load_scores, table2, write_table2

with log_to_file(snakemake.log[0]):
    table = table2(load_scores(snakemake.input), snakemake.params.task_metrics, snakemake.params.decoders)
    write_table2(table, snakemake.output.csv, snakemake.output.markdown)
