"""Snakemake adapter: rule nll_histogram -> gold_textgen.analyses.nll_histogram."""

from gold_textgen.analyses import nll_histogram
from gold_textgen.logs import log_to_file

with log_to_file(snakemake.log[0]):
    nll_histogram(dict(snakemake.input.items()), snakemake.output.figure, snakemake.output.summary)
