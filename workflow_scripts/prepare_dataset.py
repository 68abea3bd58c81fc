"""Snakemake adapter: rule prepare_dataset -> gold_textgen.prepare.prepare_dataset."""

from gold_textgen.logs import log_to_file
from gold_textgen.prepare import prepare_dataset

with log_to_file(snakemake.log[0]):
    outputs = dict(zip(snakemake.params.splits, snakemake.output, strict=True))
    prepare_dataset(snakemake.params.source, outputs, archive=snakemake.params.archive, task=snakemake.wildcards.task)
