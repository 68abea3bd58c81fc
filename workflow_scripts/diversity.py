"""Snakemake adapter: rule diversity -> gold_textgen.analysis.rule_outputs.write_diversity."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

from gold_textgen.analysis.rule_outputs import write_diversity
from gold_textgen.runtime.files import write_html_table
from gold_textgen.runtime.logs import log_to_file

with log_to_file(snakemake.log[0]):
    table = write_diversity(snakemake.params.runs, snakemake.input.data, snakemake.output.csv, snakemake.params.analysis["max_ngram"])
    write_html_table(snakemake.output.html, table, f"Diversity: {snakemake.wildcards.task}", labels=4)
