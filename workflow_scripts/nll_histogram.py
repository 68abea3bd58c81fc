"""Snakemake adapter: rule nll_histogram -> gold_textgen.analysis.rule_outputs.nll_histogram."""

from gold_textgen.analysis.rule_outputs import nll_histogram
from gold_textgen.workflow.logs import log_to_file

with log_to_file(snakemake.log[0]):
    nll_histogram(dict(snakemake.input.items()), snakemake.output.figure, snakemake.output.summary)
