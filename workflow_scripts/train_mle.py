"""Snakemake adapter: rule train_mle -> gold_textgen.training.mle.train_mle (torchrun when the rule has GPUs > 1)."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

from pathlib import Path

from gold_textgen.runtime.logs import log_to_file
from gold_textgen.runtime.model_process import prepare_model_process
from gold_textgen.training.launch import rule_job, run_training, worker_count

with log_to_file(snakemake.log[0]):
    prepare_model_process(snakemake.threads)
    tokenizer = Path(snakemake.input.tokenizer) if snakemake.input.tokenizer else None
    run_training("mle", rule_job(snakemake, "mle", tokenizer), processes=worker_count(snakemake.resources.get("gpu", 1)))
