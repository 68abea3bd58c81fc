"""Snakemake adapter: rule exposure_bias -> gold_textgen.analyses.exposure_bias."""

from gold_textgen.analyses import exposure_bias
from gold_textgen.logs import log_to_file

with log_to_file(snakemake.log[0]):
    exposure_bias(dict(snakemake.input.items()), snakemake.output.figure, snakemake.output.stats, snakemake.params.analysis)
