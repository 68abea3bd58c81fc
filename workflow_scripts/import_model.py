"""Snakemake adapter: rule import_model -> gold_textgen.model_exchange.import_record (the record) and
gold_textgen.data.checkpoint_tokenizer (its tokenizer, checked)."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

from pathlib import Path

from gold_textgen.data.checkpoint_tokenizer import checked_tokenizer_settings
from gold_textgen.model_exchange.import_record import checked_import, recorded_tokenizer_folder, write_import_record
from gold_textgen.runtime.files import read_jsonl
from gold_textgen.runtime.logs import log_to_file

with log_to_file(snakemake.log[0]):
    checkpoint = snakemake.params.checkpoint
    record = checked_import(Path(checkpoint["path"]), checkpoint["base"], checkpoint["key"])
    # the tokenizer checked on the test split's own texts before anything is evaluated with it
    texts = [text for row in read_jsonl(snakemake.input.data) for text in (row["source"], row["target"])]
    record["tokenizer"] = checked_tokenizer_settings(recorded_tokenizer_folder(record), texts, checkpoint["key"])
    write_import_record(Path(snakemake.output[0]), record)
