"""Snakemake adapter: rule lead3 -> gold_textgen.evaluation.lead3 (outputs) and gold_textgen.evaluation.scoring (scores)."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

from pathlib import Path

from gold_textgen.evaluation.lead3 import write_lead_generations
from gold_textgen.evaluation.metrics import Scoring
from gold_textgen.evaluation.scoring import write_scores
from gold_textgen.runtime.logs import log_to_file

with log_to_file(snakemake.log[0]):
    write_lead_generations(snakemake.input.data, snakemake.output.generations)
    labels = {"task": snakemake.wildcards.task, "objective": "lead3", "split": snakemake.wildcards.split, "decoder": "lead3"}
    write_scores(Path(snakemake.output.generations), None, Path(snakemake.output.scores), labels, Scoring(**snakemake.params.scoring))
