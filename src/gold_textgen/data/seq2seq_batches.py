"""Turning contract records into tokenized examples for the Trainer, and batches for inference."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import datasets
from transformers import PreTrainedTokenizerBase


def tokenize_records(
    records: Sequence[dict], tokenizer: PreTrainedTokenizerBase, max_source_length: int, max_target_length: int
) -> datasets.Dataset:
    """A `datasets.Dataset` with input_ids, attention_mask and labels (reference tokens + EOS, truncated)."""
    table = datasets.Dataset.from_dict({"source": [r["source"] for r in records], "target": [r["target"] for r in records]})

    def encode(batch: dict) -> dict:
        features = tokenizer(batch["source"], max_length=max_source_length, truncation=True)
        features["labels"] = tokenizer(text_target=batch["target"], max_length=max_target_length, truncation=True)["input_ids"]
        return features

    return table.map(encode, batched=True, remove_columns=["source", "target"], desc="tokenizing")


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> Iterator[list[int]]:
    """Indices in batches of similar length, longest first (less padding, and any out-of-memory shows at once)."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]
