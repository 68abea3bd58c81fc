"""Snakemake adapter: rule diversity -> gold_textgen.analyses.diversity."""

from gold_textgen.analyses import diversity
from gold_textgen.io_utils import write_html_table
from gold_textgen.logs import log_to_file

with log_to_file(snakemake.log[0]):
    table = diversity(list(snakemake.input.generations), snakemake.input.data, snakemake.output.csv, snakemake.params.max_order)
    write_html_table(snakemake.output.html, table, f"Diversity: {snakemake.wildcards.task}", labels=4)
