"""Snakemake adapter: rule train_tokenizer -> gold_textgen.data.tokenization.train_tokenizer."""

from gold_textgen.runtime.warm_start import hand_over

hand_over()  # from here on, in a fork of a process that has the heavy libraries imported, when one is up

import logging

from gold_textgen.data.tokenization import train_tokenizer, training_texts
from gold_textgen.data.vocabulary_coverage import copied_unk_rate, coverage_problem, unk_rate
from gold_textgen.runtime.files import atomic_directory, read_jsonl
from gold_textgen.runtime.logs import log_to_file

with log_to_file(snakemake.log[0]):
    settings = snakemake.params.settings["tokenizer"]
    records = read_jsonl(snakemake.input[0])
    tokenizer = train_tokenizer(
        training_texts(records),
        kind=settings["kind"],
        vocab_size=settings["vocab_size"],
        min_frequency=settings["min_frequency"],
        lowercase=settings["lowercase"],
        split_punctuation=settings["split_punctuation"],
        copy_slots=settings["copy_slots"],
    )
    rate = unk_rate(tokenizer, (record["target"] for record in records))
    logging.getLogger("train_tokenizer").info("%.2f%% of the training references' tokens are <unk>", rate)
    if settings["copy_slots"]:  # a copy model copies the source's unknown words instead
        rate = copied_unk_rate(tokenizer, ((record["source"], record["target"]) for record in records))
        logging.getLogger("train_tokenizer").info("%.2f%% with copying from the source (the copy models)", rate)
    problem = coverage_problem(rate, settings)
    if problem:
        raise SystemExit(problem)
    with atomic_directory(snakemake.output[0]) as staging:
        tokenizer.save_pretrained(staging)
    logging.getLogger("train_tokenizer").info("vocabulary of %d entries -> %s", len(tokenizer), snakemake.output[0])
