"""Snakemake adapter: rule download_source -> gold_textgen.sources.download.fetch."""

from gold_textgen.logs import log_to_file
from gold_textgen.sources.download import fetch

with log_to_file(snakemake.log[0]):
    fetch(snakemake.params.url, snakemake.output[0], snakemake.params.checksum)
