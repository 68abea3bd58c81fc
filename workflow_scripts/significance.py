"""Snakemake adapter: rule significance -> gold_textgen.comparisons.significance."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

from gold_textgen.analysis.paper_comparison import Run
from gold_textgen.analysis.training_marks import note as marks_note
from gold_textgen.analysis.training_marks import training_marks, with_training_marks
from gold_textgen.comparisons.significance import significance_table
from gold_textgen.comparisons.significance_report import method_note, to_markdown
from gold_textgen.evaluation.metrics import Scoring
from gold_textgen.runtime.files import write_csv, write_html_table, write_text
from gold_textgen.runtime.logs import log_to_file

with log_to_file(snakemake.log[0]):
    bootstrap = snakemake.params.bootstrap
    resamples, confidence, trials = bootstrap["bootstrap_resamples"], bootstrap["confidence"], bootstrap["randomization_trials"]
    table = significance_table(
        [Run(**run) for run in snakemake.params.runs],
        snakemake.params.task_metrics,
        {task: Scoring(**settings) for task, settings in snakemake.params.scoring.items()},
        resamples=resamples,
        confidence=confidence,
        draw_seed=bootstrap["draw_seed"],
        trials=trials,
    )
    marks = training_marks(dict(zip(snakemake.params.tasks, snakemake.input.training, strict=True)), snakemake.params.imported)
    table = with_training_marks(table, marks)
    write_csv(snakemake.output.csv, table, float_format="%.4f")
    write_text(snakemake.output.markdown, to_markdown(table, resamples, confidence, trials) + marks_note(marks))
    write_html_table(
        snakemake.output.html,
        table,
        "Significance: each objective against MLE and the control",
        method_note(resamples, confidence, trials) + marks_note(marks),
        labels=6,
    )
