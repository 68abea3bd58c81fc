"""Snakemake adapter: rule verify_dataset -> gold_textgen.data.prepare.verify_dataset."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

from gold_textgen.data.prepare import verify_dataset
from gold_textgen.runtime.logs import log_to_file

with log_to_file(snakemake.log[0]):
    prepared = dict(zip(snakemake.params.splits, snakemake.input.splits, strict=True))
    verify_dataset(snakemake.params.checks, prepared, snakemake.output[0], archive=snakemake.params.archive, task=snakemake.wildcards.task)
