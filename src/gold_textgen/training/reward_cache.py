"""Cached rewards: p_MLE of every training-reference token, computed once per (task, seed).

The MLE reward model is frozen and the references are fixed, so the authors' extra forward pass per
training step always recomputes the same numbers. The `cache_rewards` rule stores them (as the
teacher-forced token table of token_nll.py, log p = -nll) and GOLD training looks them up.
"""

from __future__ import annotations

from collections.abc import Sequence

import datasets
import numpy as np
import pandas as pd
import torch

from .fine_tune_trainer import REWARD_FIELD


def attach_cached_rewards(train_set: datasets.Dataset, table: pd.DataFrame) -> datasets.Dataset:
    """Add each example's per-token log p_MLE as a column, after checking that the cache was computed on
    exactly these tokenized references (same examples, same token ids)."""
    table = table.sort_values(["example", "position"])
    groups = table.groupby("example", sort=True)
    if groups.ngroups != len(train_set):
        raise ValueError(f"reward cache covers {groups.ngroups} examples but the training set has {len(train_set)}; rebuild the cache")
    logprobs: list[Sequence[float]] = []
    for (example, rows), labels in zip(groups, train_set["labels"], strict=True):
        if rows["token_id"].tolist() != list(labels):
            raise ValueError(f"reward cache example {example} was computed on other tokens than the training reference; rebuild the cache")
        logprobs.append((-rows["nll"].to_numpy(dtype=np.float32)).tolist())
    return train_set.add_column(REWARD_FIELD, logprobs)


class RewardPaddingCollator:
    """Wraps a seq2seq collator: pads the per-token reward column to the labels' width (0 = log 1 at
    padding, which the loss masks out anyway)."""

    def __init__(self, base):
        self.base = base

    def __call__(self, features: list[dict]) -> dict:
        rewards = [feature.pop(REWARD_FIELD) for feature in features] if REWARD_FIELD in features[0] else None
        batch = self.base(features)
        if rewards is not None:
            padded = torch.zeros(batch["labels"].shape, dtype=torch.float32)
            for row, values in enumerate(rewards):
                padded[row, : len(values)] = torch.tensor(values, dtype=torch.float32)
            batch[REWARD_FIELD] = padded
        return batch
