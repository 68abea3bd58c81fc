"""Snakemake adapter: rule exposure_bias -> gold_textgen.analysis.rule_outputs.write_exposure_bias."""

from gold_textgen.analysis.rule_outputs import write_exposure_bias
from gold_textgen.workflow.logs import log_to_file

with log_to_file(snakemake.log[0]):
    write_exposure_bias(dict(snakemake.input.items()), snakemake.output.figure, snakemake.output.stats, snakemake.params.analysis)
