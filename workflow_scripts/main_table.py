"""Snakemake adapter: rule main_table -> gold_textgen.analysis.tables."""

from gold_textgen.analysis.tables import KEYS, load_scores, scoring_note, seed_table, with_families, with_scoring, write_table
from gold_textgen.workflow.files import write_html_table
from gold_textgen.workflow.logs import log_to_file

with log_to_file(snakemake.log[0]):
    scores = load_scores(snakemake.input)
    table = with_scoring(with_families(seed_table(scores), snakemake.params.families), scores)
    labels = ("task", "family", *KEYS[1:], "seed")
    write_table(table, snakemake.output.csv, snakemake.output.markdown, note=scoring_note(scores), labels=labels)
    write_html_table(snakemake.output.html, table, "All scores: every run, then mean and std over seeds", labels=len(labels))
