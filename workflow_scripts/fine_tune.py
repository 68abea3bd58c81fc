"""Snakemake adapter: rule fine_tune -> gold_textgen.training.fine_tune.fine_tune (torchrun when the rule has GPUs > 1)."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

from pathlib import Path

from gold_textgen.bookkeeping.convergence import require_converged_start
from gold_textgen.runtime.logs import log_to_file
from gold_textgen.runtime.model_process import prepare_model_process
from gold_textgen.training.launch import rule_job, run_training, worker_count

with log_to_file(snakemake.log[0]):
    prepare_model_process(snakemake.threads)
    objective = snakemake.params.task["objectives"][snakemake.wildcards.objective]
    require_converged_start(
        snakemake.input.start, objective["start_from"] == "mle", snakemake.config["experiment"]["allow_unconverged_mle"]
    )
    run_training(
        "fine_tune",
        rule_job(snakemake, snakemake.wildcards.objective),
        processes=worker_count(snakemake.resources.get("gpu", 1)),
        start_dir=Path(snakemake.input.start),
        rewards_path=Path(snakemake.input.rewards) if snakemake.input.rewards else None,
    )
