"""Snakemake adapter: rule paper_comparison -> gold_textgen.analysis.paper_comparison."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

from gold_textgen.analysis.paper_comparison import OurModel, Run, comparison_table, to_markdown
from gold_textgen.evaluation.metrics import Scoring
from gold_textgen.runtime.files import write_csv, write_html_table, write_text
from gold_textgen.runtime.logs import log_to_file

with log_to_file(snakemake.log[0]):
    bootstrap = snakemake.params.bootstrap
    table = comparison_table(
        [Run(**run) for run in snakemake.params.runs],
        snakemake.params.paper_results,
        {task: Scoring(**settings) for task, settings in snakemake.params.scoring.items()},
        {task: OurModel(**model) for task, model in snakemake.params.our_models.items()},
        resamples=bootstrap["bootstrap_resamples"],
        confidence=bootstrap["confidence"],
        seed=bootstrap["draw_seed"],
        default_run=tuple(snakemake.params.default_run),
    )
    write_csv(snakemake.output.csv, table, float_format="%.4f")
    write_text(snakemake.output.markdown, to_markdown(table))
    write_html_table(snakemake.output.html, table, "Our numbers beside the paper's", labels=5)
