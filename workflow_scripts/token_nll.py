"""Snakemake adapter: rule cache_rewards -> gold_textgen.token_nll.write_token_nll."""

from pathlib import Path

from gold_textgen.logs import log_to_file
from gold_textgen.runtime import set_threads
from gold_textgen.token_nll import write_token_nll

with log_to_file(snakemake.log[0]):
    set_threads(snakemake.threads)
    write_token_nll(
        Path(snakemake.input.model),
        Path(snakemake.input.data),
        Path(snakemake.output[0]),
        snakemake.params.task,
        snakemake.params.positions,
    )
