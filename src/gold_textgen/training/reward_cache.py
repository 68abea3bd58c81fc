"""Cached rewards: p_MLE of every training-reference token, computed once per (task, seed).

The MLE reward model is frozen and the references are fixed, so the authors' extra forward pass per
training step always recomputes the same numbers. The `cache_rewards` rule stores them (as the
teacher-forced token table of token_nll.py, log p = -nll) and GOLD training looks them up.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import datasets
import numpy as np
import pandas as pd

from ..evaluation.token_table import read_token_table
from .fine_tune_trainer import REWARD_FIELD


def read_reward_cache(path: str | Path) -> pd.DataFrame:
    """The cache file at `path`, checked as every token table is read (evaluation/token_table.py): one that
    was damaged or changed since it was written (a copy cut short, a flipped byte), or holds an NLL that is no
    number or below 0, is an error that names the file (and the row) and says how to rebuild it."""
    return read_token_table(path, "rule cache_rewards, which retrains nothing else")


def attach_cached_rewards(train_set: datasets.Dataset, table: pd.DataFrame) -> datasets.Dataset:
    """Add each example's per-token log p_MLE as a column, after checking that the cache was computed on
    exactly these tokenized references (same examples, same token ids)."""
    bad = table[~np.isfinite(table["nll"].to_numpy(dtype=np.float64))]
    if len(bad):
        first = bad.iloc[0]
        raise ValueError(
            f"reward cache holds {len(bad)} token(s) whose p_MLE is not a number (first: example {first['example']}, position "
            f"{first['position']}, nll {first['nll']}): the MLE model it was computed with is broken; retrain it, then rebuild the cache"
        )
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
