"""Snakemake adapter: rule training_curves -> gold_textgen.training_curves."""

import sys

from gold_textgen.logs import log_to_file
from gold_textgen.training_curves import write_training_curves

with log_to_file(snakemake.log[0]):
    models = dict(snakemake.input.items())
    output = snakemake.output
    for message in write_training_curves(snakemake.wildcards.task, models, output.figure, output.curves, output.summary):
        print(f"WARNING: {message}", file=sys.__stderr__)
