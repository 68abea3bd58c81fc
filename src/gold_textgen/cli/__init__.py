"""The `gold-textgen` command (also `python -m gold_textgen`): run, plan, status, signatures, tally, export
and sft, each subcommand a thin layer over Snakemake or the package."""
