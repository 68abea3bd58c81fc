"""Snakemake adapter: rule table2 -> gold_textgen.tables.table2."""

from gold_textgen.io_utils import write_html_table
from gold_textgen.logs import log_to_file
from gold_textgen.tables import load_scores, scoring_note, table2, with_scoring, write_table2

with log_to_file(snakemake.log[0]):
    scores = load_scores(snakemake.input)
    table = table2(scores, snakemake.params.task_metrics, snakemake.params.decoders)
    write_table2(with_scoring(table, scores), snakemake.output.csv, snakemake.output.markdown, scoring_note(scores))
    write_html_table(snakemake.output.html, table, "Table 2: task metric by decoder (dev)", scoring_note(scores), labels=4)
