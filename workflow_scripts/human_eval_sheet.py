"""Snakemake adapter: rule human_eval_sheet -> gold_textgen.analysis.rule_outputs.write_human_eval_sheet."""

from gold_textgen.analysis.rule_outputs import write_human_eval_sheet
from gold_textgen.workflow.logs import log_to_file

with log_to_file(snakemake.log[0]):
    write_human_eval_sheet(dict(snakemake.input.items()), snakemake.output.sheet, snakemake.output.key, snakemake.params.analysis)
