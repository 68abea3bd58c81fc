"""Snakemake adapter: rule download_source -> gold_textgen.data.sources.download.fetch.

The URL and checksum come from the config, not from params (see rules/data.smk): changing them must not
make the archive, and every model built from it, out of date."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

from gold_textgen.data.sources.download import fetch
from gold_textgen.runtime.logs import log_to_file

with log_to_file(snakemake.log[0]):
    source = snakemake.config["tasks"][snakemake.wildcards.task]["source"]
    fetch(source["url"], snakemake.output[0], source.get("checksum"))
