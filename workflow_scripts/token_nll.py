"""Snakemake adapter: rule cache_rewards -> gold_textgen.evaluation.token_nll.write_token_nll."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

from pathlib import Path

from gold_textgen.evaluation.token_nll import write_token_nll
from gold_textgen.runtime.logs import log_to_file
from gold_textgen.runtime.model_process import prepare_model_process

with log_to_file(snakemake.log[0]):
    prepare_model_process(snakemake.threads)
    write_token_nll(
        Path(snakemake.input.model),
        Path(snakemake.input.data),
        Path(snakemake.output[0]),
        snakemake.params.task,
        snakemake.params.positions,
    )
