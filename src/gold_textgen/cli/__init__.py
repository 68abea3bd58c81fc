"""The `gold-textgen` command (also `python -m gold_textgen`): one entry point for what users do with the
workflow, each subcommand a thin layer over Snakemake or the package."""
