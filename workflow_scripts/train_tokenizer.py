"""Snakemake adapter: rule train_tokenizer -> gold_textgen.data.tokenization.train_tokenizer."""

import logging

from gold_textgen.data.tokenization import train_tokenizer, training_texts
from gold_textgen.workflow.files import atomic_directory, read_jsonl
from gold_textgen.workflow.logs import log_to_file

with log_to_file(snakemake.log[0]):
    settings = snakemake.params.settings["tokenizer"]
    tokenizer = train_tokenizer(
        training_texts(read_jsonl(snakemake.input[0])),
        kind=settings["kind"],
        vocab_size=settings["vocab_size"],
        min_frequency=settings["min_frequency"],
        lowercase=settings["lowercase"],
        split_punctuation=settings["split_punctuation"],
        copy_slots=settings["copy_slots"],
    )
    with atomic_directory(snakemake.output[0]) as staging:
        tokenizer.save_pretrained(staging)
    logging.getLogger("train_tokenizer").info("vocabulary of %d entries -> %s", len(tokenizer), snakemake.output[0])
