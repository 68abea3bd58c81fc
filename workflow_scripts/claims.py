"""Snakemake adapter: rule claims -> gold_textgen.comparisons.claim_verdicts (the paper's registered claims)."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

from gold_textgen.claims.paper_claims import ClaimTest
from gold_textgen.comparisons.claim_verdicts import claims_table, runs_by_task
from gold_textgen.comparisons.claims_report import method_note, to_markdown, with_imported
from gold_textgen.evaluation.metrics import Scoring
from gold_textgen.runtime.files import write_csv, write_html_table, write_text
from gold_textgen.runtime.logs import log_to_file

with log_to_file(snakemake.log[0]):
    bootstrap = snakemake.params.bootstrap
    scoring = {task: Scoring(**settings) for task, settings in snakemake.params.scoring.items()}
    tests = [ClaimTest(**test) for test in snakemake.params.tests]
    table = claims_table(
        tests,
        runs_by_task(snakemake.params.runs, scoring),
        snakemake.params.seeds,
        snakemake.params.task_metrics,
        resamples=bootstrap["bootstrap_resamples"],
        draw_seed=bootstrap["draw_seed"],
    )
    table = with_imported(table, tests, snakemake.params.imported)  # a claim read on a model trained elsewhere says so
    write_csv(snakemake.output.csv, table, float_format="%.6g")
    write_text(snakemake.output.markdown, to_markdown(table))
    write_html_table(snakemake.output.html, table, "The paper's claims, tested on this experiment", method_note(), labels=3)
