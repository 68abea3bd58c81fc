"""Snakemake adapter: rule examples -> gold_textgen.analyses.examples."""

from gold_textgen.analyses import examples
from gold_textgen.logs import log_to_file

with log_to_file(snakemake.log[0]):
    examples(dict(snakemake.input.items()), snakemake.output.csv, snakemake.output.markdown, snakemake.params.analysis)
