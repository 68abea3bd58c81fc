"""Snakemake adapter: rule fine_tune -> gold_textgen.training.fine_tune.fine_tune (torchrun when the rule has GPUs > 1)."""

from pathlib import Path

from gold_textgen.training.launch import run_training, worker_count
from gold_textgen.training.trainer import TrainingJob
from gold_textgen.workflow.logs import log_to_file
from gold_textgen.workflow.runtime import set_threads

with log_to_file(snakemake.log[0]):
    set_threads(snakemake.threads)
    run_training(
        "fine_tune",
        TrainingJob(
            task=snakemake.params.task,
            objective=snakemake.wildcards.objective,
            seed=int(snakemake.wildcards.seed),
            train_path=Path(snakemake.input.train),
            valid_path=Path(snakemake.input.valid),
            tokenizer_path=None,
            output_dir=Path(snakemake.output[0]),
            checkpoint_dir=Path(snakemake.params.checkpoint_dir),
            repo_dir=Path(snakemake.scriptdir).parent,  # provenance records its git revision
            log_dir=Path(snakemake.params.run_dir),
            logger=snakemake.config["training_logger"],  # read here, not a param: changing it retrains nothing
        ),
        processes=worker_count(snakemake.resources.get("gpu", 1)),
        start_dir=Path(snakemake.input.start),
        rewards_path=Path(snakemake.input.rewards) if snakemake.input.rewards else None,
    )
