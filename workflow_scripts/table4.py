"""Snakemake adapter: rule table4 -> gold_textgen.analysis.on_policy_table."""

from gold_textgen.analysis.on_policy_table import table4, write_table4
from gold_textgen.analysis.tables import load_scores, scoring_note
from gold_textgen.analysis.unconverged_marks import note as unconverged_note
from gold_textgen.analysis.unconverged_marks import unconverged_seeds, with_unconverged_marks
from gold_textgen.workflow.files import write_html_table
from gold_textgen.workflow.logs import log_to_file

with log_to_file(snakemake.log[0]):
    scores = load_scores(snakemake.input.scores)
    unconverged = unconverged_seeds(dict(zip(snakemake.params.tasks, snakemake.input.training, strict=True)))
    table = table4(scores, snakemake.params.task_metrics, snakemake.params.starts, snakemake.params.reward_metrics)
    table = with_unconverged_marks(table, unconverged)
    footer = scoring_note(scores) + unconverged_note(unconverged)
    write_table4(table, snakemake.output.csv, snakemake.output.markdown, footer)
    write_html_table(snakemake.output.html, table, "Table 4: on-policy fine-tuning (test)", footer, labels=3)
