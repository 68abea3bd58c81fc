"""Snakemake adapter: rule examples -> gold_textgen.analyses.examples."""

from gold_textgen.analyses import examples
from gold_textgen.io_utils import write_html_table
from gold_textgen.logs import log_to_file

with log_to_file(snakemake.log[0]):
    table = examples(dict(snakemake.input.items()), snakemake.output.csv, snakemake.output.markdown, snakemake.params.analysis)
    write_html_table(snakemake.output.html, table, f"Examples: {snakemake.wildcards.task}", labels=1)
