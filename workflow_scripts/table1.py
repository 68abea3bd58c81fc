"""Snakemake adapter: rule table1 -> gold_textgen.tables.table1."""

from gold_textgen.logs import log_to_file
from gold_textgen.tables import load_scores, table1, write_table

with log_to_file(snakemake.log[0]):
    table, columns = table1(load_scores(snakemake.input), snakemake.params.task_metrics)
    write_table(table, snakemake.output.csv, snakemake.output.markdown, columns, labels=("task", "objective", "seed"))
