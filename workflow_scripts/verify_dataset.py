"""Snakemake adapter: rule verify_dataset -> gold_textgen.data.prepare.verify_dataset (test split, checks)."""

from gold_textgen.data.prepare import verify_dataset
from gold_textgen.workflow.logs import log_to_file

with log_to_file(snakemake.log[0]):
    prepared = dict(zip(snakemake.params.splits, snakemake.input.prepared, strict=True))
    verify_dataset(snakemake.params.source, snakemake.output[0], prepared, archive=snakemake.params.archive, task=snakemake.wildcards.task)
