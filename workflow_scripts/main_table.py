"""Snakemake adapter: rule main_table -> gold_textgen.analysis.tables."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

import pandas as pd

from gold_textgen.analysis.tables import load_scores, scoring_note, seed_table, with_families, with_scoring, write_table
from gold_textgen.analysis.training_marks import note as marks_note
from gold_textgen.analysis.training_marks import training_marks, with_training_marks
from gold_textgen.comparisons.significance_report import note, significance_columns, with_significance
from gold_textgen.runtime.files import write_html_table
from gold_textgen.runtime.logs import log_to_file

with log_to_file(snakemake.log[0]):
    scores = load_scores(snakemake.input.scores)
    significance = pd.read_csv(snakemake.input.significance)
    table = with_scoring(with_families(seed_table(scores), snakemake.params.families), scores)
    marks = training_marks(dict(zip(snakemake.params.tasks, snakemake.input.training, strict=True)), snakemake.params.imported)
    table = with_training_marks(with_significance(table, significance), marks)
    labels = ("task", "family", "objective", "role", "split", "decoder", "seed")
    footer = scoring_note(scores) + note(significance) + marks_note(marks)
    marked = significance_columns(table) + marks.columns
    write_table(table, snakemake.output.csv, snakemake.output.markdown, note=footer, labels=labels, text_columns=marked)
    write_html_table(snakemake.output.html, table, "All scores: every run, then mean and std over seeds", footer, labels=len(labels))
