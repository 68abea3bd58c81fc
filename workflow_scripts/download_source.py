"""Snakemake adapter: rule download_source -> gold_textgen.data.sources.download.fetch."""

from gold_textgen.data.sources.download import fetch
from gold_textgen.workflow.logs import log_to_file

with log_to_file(snakemake.log[0]):
    fetch(snakemake.params.url, snakemake.output[0], snakemake.params.checksum)
