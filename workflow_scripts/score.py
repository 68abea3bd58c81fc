"""Snakemake adapter: rule score -> gold_textgen.scoring.write_scores."""

from pathlib import Path

from gold_textgen.logs import log_to_file
from gold_textgen.metrics import Scoring
from gold_textgen.scoring import write_scores

with log_to_file(snakemake.log[0]):
    labels = {key: snakemake.wildcards[key] for key in ("task", "objective", "split", "decoder")}
    labels["seed"] = int(snakemake.wildcards.seed)
    labels["sample"] = int(snakemake.wildcards.sample)
    output = Path(snakemake.output[0])
    write_scores(Path(snakemake.input.generations), Path(snakemake.input.nll), output, labels, Scoring(**snakemake.params.scoring))
