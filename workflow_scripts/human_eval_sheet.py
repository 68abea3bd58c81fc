"""Snakemake adapter: rule human_eval_sheet -> gold_textgen.analyses.human_eval_sheet."""

from gold_textgen.analyses import human_eval_sheet
from gold_textgen.logs import log_to_file

with log_to_file(snakemake.log[0]):
    human_eval_sheet(dict(snakemake.input.items()), snakemake.output.sheet, snakemake.output.key, snakemake.params.analysis)
