"""Snakemake adapter: rule prepare_dataset -> gold_textgen.data.prepare.prepare_dataset (train and valid)."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

from gold_textgen.data.prepare import prepare_dataset
from gold_textgen.runtime.logs import log_to_file

with log_to_file(snakemake.log[0]):
    outputs = dict(zip(snakemake.params.splits, snakemake.output, strict=True))
    prepare_dataset(snakemake.params.source, outputs, archive=snakemake.params.archive, task=snakemake.wildcards.task)
