"""Turning contract records into tokenized examples for the Trainer, and batches for inference.

A tokenizer with copy placeholders (copy_vocabulary.py) encodes each record with its own extended
vocabulary; a model that reads token features (token_features.py) gets one id per source word for each
(these models' word-level tokenizers have one token per word).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import datasets
import torch
from tqdm.auto import tqdm
from transformers import PreTrainedTokenizerBase

from .copy_vocabulary import CopyVocabulary, copy_vocabulary_of
from .records import DataFormatError
from .token_features import FEATURE_COLUMNS, feature_ids
from .tokenization import padding_right


def encode_records(
    records: Sequence[dict],
    tokenizer: PreTrainedTokenizerBase,
    max_source_length: int,
    max_target_length: int | None,
    features: Sequence[str] = (),
    causal: bool = False,
) -> list[dict]:
    """Per record: input_ids, attention_mask, labels (reference tokens + EOS, truncated; left out when
    `max_target_length` is None), the `features`' tag ids and, with copy placeholders, the source's
    out-of-vocabulary words (`oov_words`). For a decoder-only model (`causal`) the labels never start
    with BOS, though its tokenizer may add one to every text (Llama, Gemma): the completion follows the
    prompt, whose BOS the model has read, and a model taught to emit BOS there would emit it at test time."""
    copying = copy_vocabulary_of(tokenizer)
    if copying is None and not features:
        sources = source_ids(records, tokenizer, max_source_length)
        encoded = [
            {"input_ids": ids, "attention_mask": mask} for ids, mask in zip(sources["input_ids"], sources["attention_mask"], strict=True)
        ]
        if max_target_length is not None:
            targets = target_ids(tokenizer, [r["target"] for r in records], causal, max_target_length)
            for example, labels in zip(encoded, targets, strict=True):
                example["labels"] = ending_with_eos(labels, tokenizer.eos_token_id, max_target_length)
        return encoded
    vocabulary = copying or CopyVocabulary(tokenizer)  # word by word: NQG++'s features align with words
    encoded = []
    for record in tqdm(records, desc="encoding words", unit="record", mininterval=5.0):
        target = record["target"] if max_target_length is not None else None
        pair = vocabulary.encode(record["source"], target, max_source_length, max_target_length or 0)
        example = {"input_ids": pair.input_ids, "attention_mask": [1] * len(pair.input_ids), "oov_words": pair.oov_words}
        if pair.labels is not None:
            example["labels"] = pair.labels
        for name in features:
            example[FEATURE_COLUMNS[name]] = feature_ids(record, name, pair.source_words, len(pair.input_ids))
        encoded.append(example)
    return encoded


def source_ids(records: Sequence[dict], tokenizer: PreTrainedTokenizerBase, max_length: int) -> dict[str, list[list[int]]]:
    """The sources' input_ids and attention_mask. A conversation's prompt (`messages`, local format `chat`)
    goes through the tokenizer's chat template with the assistant's turn opened, as a chat model reads it
    at inference; one longer than `max_length` loses its first tokens (the oldest turns), never the
    opening of the assistant's turn."""
    if not any("messages" in record for record in records):
        return tokenizer([record["source"] for record in records], max_length=max_length, truncation=True)
    if not getattr(tokenizer, "chat_template", None):
        raise DataFormatError(
            "the data are conversations (local format chat), and the model's tokenizer has no chat template to render them: "
            "use a chat model's tokenizer, or the jsonl format with source and target fields"
        )
    if not all("messages" in record for record in records):
        raise DataFormatError("a split mixes conversations (`messages`) with plain sources")
    ids = [
        tokenizer.apply_chat_template(record["messages"], add_generation_prompt=True, tokenize=True, return_dict=False)[-max_length:]
        for record in records
    ]
    return {"input_ids": ids, "attention_mask": [[1] * len(row) for row in ids]}


def target_ids(tokenizer: PreTrainedTokenizerBase, targets: list[str], causal: bool, max_length: int | None) -> list[list[int]]:
    """The targets' token ids, cut at `max_length` (None: uncut); a decoder-only model's without the
    BOS its tokenizer may put first (cut after it is dropped, so the limit counts completion tokens)."""
    if not causal:
        truncation = {"max_length": max_length, "truncation": True} if max_length is not None else {"truncation": False}
        return tokenizer(text_target=targets, **truncation)["input_ids"]
    encoded = tokenizer(text_target=targets, truncation=False)["input_ids"]
    start = tokenizer.bos_token_id
    uncut = [ids[1:] if start is not None and ids[:1] == [start] else ids for ids in encoded]
    return [ids[:max_length] if max_length is not None else ids for ids in uncut]


def references_cut(records: Sequence[dict], tokenizer: PreTrainedTokenizerBase, max_target_length: int, causal: bool = False) -> int:
    """How many references are longer than `max_target_length` tokens (EOS included), so that training and
    the reward cache see them cut: a model that never sees a reference end learns to stop too early."""
    if copy_vocabulary_of(tokenizer) is not None:  # one token per word, then EOS (copy_vocabulary.py)
        return sum(len(record["target"].split()) + 1 > max_target_length for record in records)
    lengths = target_ids(tokenizer, [record["target"] for record in records], causal, None)
    return sum(len(ids) + (ids[-1:] != [tokenizer.eos_token_id]) > max_target_length for ids in lengths)


def ending_with_eos(labels: list[int], eos_token_id: int | None, max_length: int) -> list[int]:
    """`labels` with EOS last: the seq2seq tokenizers add it to every target, a causal LM's tokenizer (Qwen,
    Llama) adds none, and without it the model never learns to end its completion."""
    if eos_token_id is None or (labels and labels[-1] == eos_token_id):
        return labels
    return [*labels[: max_length - 1], eos_token_id]


def tokenize_records(
    records: Sequence[dict],
    tokenizer: PreTrainedTokenizerBase,
    max_source_length: int,
    max_target_length: int,
    features: Sequence[str] = (),
    keep_oov_words: bool = False,
    causal: bool = False,
) -> datasets.Dataset:
    """A `datasets.Dataset` with input_ids, attention_mask, labels and the token features' columns; with
    `keep_oov_words` and copy placeholders, each source's unknown words too (`oov_words`: on-policy training
    scores samples with the words they copied); `causal` as in encode_records."""
    encoded = encode_records(records, tokenizer, max_source_length, max_target_length, features, causal)
    columns = ["input_ids", "attention_mask", "labels", *(FEATURE_COLUMNS[name] for name in features)]
    if keep_oov_words and copy_vocabulary_of(tokenizer) is not None:
        columns.append(OOV_WORDS)
    return datasets.Dataset.from_dict({column: [example[column] for example in encoded] for column in columns})


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> Iterator[list[int]]:
    """Indices in batches of similar length, longest first (less padding, and any out-of-memory shows at once)."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


OOV_WORDS = "oov_words"  # per example, the source words its copy placeholders stand for


class PaddedFieldsCollator:
    """Wraps a seq2seq collator: pads the per-token fields it does not know (token features, aligned with
    input_ids; cached rewards, aligned with labels) to their batch width with 0, and hands the copy models'
    `oov_words` on as a list per example. Every row is padded on the right, whatever the tokenizer object
    says (the extra fields are aligned from the left); a tokenizer without a pad token pads with EOS."""

    def __init__(self, base, source_fields: Sequence[str] = tuple(FEATURE_COLUMNS.values()), label_fields: Sequence[str] = ()):
        base.tokenizer = padding_right(base.tokenizer)
        self.base = base
        self.fields = {**dict.fromkeys(source_fields, "input_ids"), **dict.fromkeys(label_fields, "labels")}

    def __call__(self, features: list[dict]) -> dict:
        extra = {name: [feature.pop(name) for feature in features] for name in self.fields if name in features[0]}
        words = [feature.pop(OOV_WORDS) for feature in features] if OOV_WORDS in features[0] else None
        batch = self.base(features)
        if words is not None:
            batch[OOV_WORDS] = words
        for name, rows in extra.items():
            width = batch[self.fields[name]].shape[1]
            dtype = torch.float32 if isinstance(rows[0][0], float) else torch.long
            padded = torch.zeros(len(rows), width, dtype=dtype)
            for row, values in enumerate(rows):
                padded[row, : len(values)] = torch.tensor(values, dtype=dtype)
            batch[name] = padded
        return batch
