"""Snakemake adapter: rule table1 -> gold_textgen.analysis.tables.table1."""

import pandas as pd

from gold_textgen.analysis.significance import note, significance_columns, with_significance
from gold_textgen.analysis.tables import load_scores, scoring_note, table1, table1_labels, with_families, with_scoring, write_table
from gold_textgen.analysis.unconverged_marks import COLUMN, unconverged_seeds, with_unconverged_marks
from gold_textgen.analysis.unconverged_marks import note as unconverged_note
from gold_textgen.workflow.files import write_html_table
from gold_textgen.workflow.logs import log_to_file

with log_to_file(snakemake.log[0]):
    scores = load_scores(snakemake.input.scores)
    significance = pd.read_csv(snakemake.input.significance)
    table, columns = table1(scores, snakemake.params.task_metrics)
    unconverged = unconverged_seeds(dict(zip(snakemake.params.tasks, snakemake.input.training, strict=True)))
    table = with_significance(with_families(table, snakemake.params.families), significance)
    labels = table1_labels(table)
    table = with_unconverged_marks(with_scoring(table, scores), unconverged)
    compared = significance_columns(table) + ([COLUMN] if unconverged else [])
    footer = scoring_note(scores) + note(significance) + unconverged_note(unconverged)
    write_table(table, snakemake.output.csv, snakemake.output.markdown, columns, footer, labels=labels, text_columns=compared)
    shown = table[[*labels, *(c for m in columns for c in (m, f"{m}_std")), *compared]]
    write_html_table(snakemake.output.html, shown, "Table 1: task metric and perplexity", footer, labels=len(labels))
