"""Snakemake adapter: rule nll_by_time_step -> gold_textgen.analysis.rule_outputs.write_nll_by_time_step."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

from gold_textgen.analysis.rule_outputs import write_nll_by_time_step
from gold_textgen.runtime.logs import log_to_file

with log_to_file(snakemake.log[0]):
    write_nll_by_time_step(dict(snakemake.input.items()), snakemake.output.figure, snakemake.output.stats, snakemake.params.analysis)
