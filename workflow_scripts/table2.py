"""Snakemake adapter: rule table2 -> gold_textgen.analysis.tables.table2."""

from gold_textgen.analysis.tables import load_scores, scoring_note, table2, with_families, with_scoring, write_table2
from gold_textgen.analysis.unconverged_marks import note as unconverged_note
from gold_textgen.analysis.unconverged_marks import unconverged_seeds, with_unconverged_marks
from gold_textgen.workflow.files import write_html_table
from gold_textgen.workflow.logs import log_to_file

with log_to_file(snakemake.log[0]):
    scores = load_scores(snakemake.input.scores)
    unconverged = unconverged_seeds(dict(zip(snakemake.params.tasks, snakemake.input.training, strict=True)))
    table = with_families(table2(scores, snakemake.params.task_metrics, snakemake.params.decoders), snakemake.params.families)
    table = with_unconverged_marks(table, unconverged)
    footer = scoring_note(scores) + unconverged_note(unconverged)
    write_table2(with_scoring(table, scores), snakemake.output.csv, snakemake.output.markdown, footer)
    write_html_table(snakemake.output.html, table, "Table 2: task metric by decoder (dev)", footer, labels=6)
