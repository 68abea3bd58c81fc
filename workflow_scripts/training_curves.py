"""Snakemake adapter: rule training_curves -> gold_textgen.analysis.training_curves."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

import sys

from gold_textgen.analysis.training_curves import write_training_curves
from gold_textgen.runtime.logs import log_to_file

with log_to_file(snakemake.log[0]):
    models = dict(snakemake.input.items())
    output = snakemake.output
    for message in write_training_curves(snakemake.wildcards.task, models, output.figure, output.curves, output.summary):
        print(f"WARNING: {message}", file=sys.__stderr__)
