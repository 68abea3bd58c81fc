"""Snakemake adapter: rule diversity -> gold_textgen.analyses.diversity."""

from gold_textgen.analyses import diversity
from gold_textgen.logs import log_to_file

with log_to_file(snakemake.log[0]):
    diversity(list(snakemake.input.generations), snakemake.input.data, snakemake.output[0], snakemake.params.max_order)
