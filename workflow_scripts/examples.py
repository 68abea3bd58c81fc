"""Snakemake adapter: rule examples -> gold_textgen.analysis.rule_outputs.write_example_table."""

from gold_textgen.analysis.rule_outputs import write_example_table
from gold_textgen.workflow.files import write_html_table
from gold_textgen.workflow.logs import log_to_file

with log_to_file(snakemake.log[0]):
    table = write_example_table(dict(snakemake.input.items()), snakemake.output.csv, snakemake.output.markdown, snakemake.params.analysis)
    write_html_table(snakemake.output.html, table, f"Examples: {snakemake.wildcards.task}", labels=1)
