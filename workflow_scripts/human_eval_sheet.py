"""Snakemake adapter: rule human_eval_sheet -> gold_textgen.analysis.rule_outputs.write_human_eval_sheet."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

from gold_textgen.analysis.rule_outputs import write_human_eval_sheet
from gold_textgen.runtime.logs import log_to_file

with log_to_file(snakemake.log[0]):
    write_human_eval_sheet(dict(snakemake.input.items()), snakemake.output.sheet, snakemake.output.key, snakemake.params.analysis)
