"""Percentile-bootstrap confidence intervals for means, vectorised with numpy."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def bootstrap_interval(values: Sequence[float], resamples: int = 1000, confidence: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """The percentile-bootstrap interval of the mean of `values` (NaN for fewer than two values)."""
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def mean_with_interval(
    frame: pd.DataFrame, by: str, value: str, resamples: int = 1000, confidence: float = 0.95, seed: int = 0, min_count: int = 1
) -> pd.DataFrame:
    """Per value of `by`: the mean of `value`, its bootstrap interval (`low`, `high`) and the count; groups
    with fewer than `min_count` rows are left out (their bands would be noise)."""
    rows = []
    for key, group in frame.groupby(by, sort=True):
        if len(group) < min_count:
            continue
        low, high = bootstrap_interval(group[value].to_numpy(), resamples, confidence, seed)
        rows.append({by: key, "mean": float(group[value].mean()), "low": low, "high": high, "count": len(group)})
    return pd.DataFrame(rows, columns=[by, "mean", "low", "high", "count"])
