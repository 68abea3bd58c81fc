"""Snakemake adapter: rule objectives_table -> gold_textgen.comparisons.objectives_table."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

import pandas as pd

from gold_textgen.analysis.tables import load_scores, scoring_note
from gold_textgen.analysis.training_marks import note as marks_note
from gold_textgen.analysis.training_marks import training_marks, with_training_marks
from gold_textgen.comparisons.objectives_table import objectives_table, smoothing_note, write_objectives
from gold_textgen.comparisons.significance_report import note, with_significance
from gold_textgen.runtime.files import write_html_table
from gold_textgen.runtime.logs import log_to_file

with log_to_file(snakemake.log[0]):
    scores = load_scores(snakemake.input.scores)
    sweep = load_scores(snakemake.input.sweep) if snakemake.input.sweep else None
    diversity = {task: pd.read_csv(path) for task, path in zip(snakemake.params.tasks, snakemake.input.diversity, strict=True)}
    significance = pd.read_csv(snakemake.input.significance)
    marks = training_marks(dict(zip(snakemake.params.tasks, snakemake.input.training, strict=True)), snakemake.params.imported)
    table = with_significance(objectives_table(scores, sweep, diversity, snakemake.params.task_metrics), significance)
    table = with_training_marks(table, marks)
    footer = scoring_note(scores) + note(significance) + marks_note(marks) + smoothing_note(snakemake.params.smoothing)
    write_objectives(table, snakemake.output.csv, snakemake.output.markdown, snakemake.output.figure, footer)
    write_html_table(
        snakemake.output.html,
        table,
        "Objectives side by side (test metric, perplexity, sampling drop, diversity, significance)",
        footer,
        labels=4,
    )
