"""Snakemake adapter: rule import_model -> gold_textgen.models.import_record.record_import."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

from pathlib import Path

from gold_textgen.models.import_record import record_import
from gold_textgen.runtime.logs import log_to_file

with log_to_file(snakemake.log[0]):
    checkpoint = snakemake.params.checkpoint
    record_import(Path(snakemake.output[0]), Path(checkpoint["path"]), checkpoint["base"], checkpoint["key"])
