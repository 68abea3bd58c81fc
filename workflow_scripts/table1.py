"""Snakemake adapter: rule table1 -> gold_textgen.analysis.tables.table1."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

import pandas as pd

from gold_textgen.analysis.tables import load_scores, scoring_note, table1, table1_labels, with_families, with_scoring, write_table
from gold_textgen.analysis.training_marks import note as marks_note
from gold_textgen.analysis.training_marks import training_marks, with_training_marks
from gold_textgen.comparisons.significance_report import note, significance_columns, with_significance
from gold_textgen.runtime.files import write_html_table
from gold_textgen.runtime.logs import log_to_file

with log_to_file(snakemake.log[0]):
    scores = load_scores(snakemake.input.scores)
    significance = pd.read_csv(snakemake.input.significance)
    table, columns = table1(scores, snakemake.params.task_metrics)
    marks = training_marks(dict(zip(snakemake.params.tasks, snakemake.input.training, strict=True)), snakemake.params.imported)
    table = with_significance(with_families(table, snakemake.params.families), significance)
    labels = table1_labels(table)
    table = with_training_marks(with_scoring(table, scores), marks)
    compared = significance_columns(table) + marks.columns
    footer = scoring_note(scores) + note(significance) + marks_note(marks)
    write_table(table, snakemake.output.csv, snakemake.output.markdown, columns, footer, labels=labels, text_columns=compared)
    shown = table[[*labels, *(c for m in columns for c in (m, f"{m}_std")), *compared]]
    write_html_table(snakemake.output.html, shown, "Table 1: task metric and perplexity", footer, labels=len(labels))
