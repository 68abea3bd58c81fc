"""Snakemake adapter: rule table4 -> gold_textgen.comparisons.on_policy_table."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

from gold_textgen.analysis.tables import load_scores, scoring_note
from gold_textgen.analysis.training_marks import note as marks_note
from gold_textgen.analysis.training_marks import training_marks, with_training_marks
from gold_textgen.comparisons.on_policy_table import table4, write_table4
from gold_textgen.runtime.files import write_html_table
from gold_textgen.runtime.logs import log_to_file

with log_to_file(snakemake.log[0]):
    scores = load_scores(snakemake.input.scores)
    marks = training_marks(dict(zip(snakemake.params.tasks, snakemake.input.training, strict=True)), snakemake.params.imported)
    table = table4(scores, snakemake.params.task_metrics, snakemake.params.starts, snakemake.params.reward_metrics)
    table = with_training_marks(table, marks)
    footer = scoring_note(scores) + marks_note(marks)
    write_table4(table, snakemake.output.csv, snakemake.output.markdown, footer)
    write_html_table(snakemake.output.html, table, "Table 4: on-policy fine-tuning (test)", footer, labels=3)
