"""Snakemake adapter: rules evaluate_<split> -> gold_textgen.evaluation.model_evaluation.evaluate_model."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

from pathlib import Path

from gold_textgen.evaluation.metrics import Scoring
from gold_textgen.evaluation.model_evaluation import DecodingRun, evaluate_model
from gold_textgen.runtime.logs import log_to_file
from gold_textgen.runtime.model_process import prepare_model_process

with log_to_file(snakemake.log[0]):
    prepare_model_process(snakemake.threads)
    files = zip(snakemake.output.generations, snakemake.output.scores, strict=True)
    runs = [
        DecodingRun(run["decoder"], run["sample"], run["settings"], Path(generations), Path(scores))
        for run, (generations, scores) in zip(snakemake.params.runs, files, strict=True)
    ]
    labels = {key: snakemake.wildcards[key] for key in ("task", "objective")}
    labels.update(seed=int(snakemake.wildcards.seed), split=snakemake.params.split)
    evaluate_model(
        Path(snakemake.input.model),
        Path(snakemake.input.data),
        Path(snakemake.output.nll),
        runs,
        snakemake.params.task,
        Scoring(**snakemake.params.scoring),
        labels,
    )
