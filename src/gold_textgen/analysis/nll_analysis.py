"""What the teacher-forced token NLL tables say about a model (the paper's Figures 1, 2 right and 5):
the distribution of token NLL, and NLL and accuracy by time step given the gold prefix."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from .bootstrap import mean_with_interval


def nll_distribution_summary(tables: Mapping[str, pd.DataFrame], near_zero: float = 0.1, tail: float = 5.0) -> pd.DataFrame:
    """Per model: the shares of tokens with NLL below `near_zero` and above `tail`, and quantiles; GOLD is
    expected to hold more mass near zero and a longer tail than MLE (it gives up on unlikely tokens)."""
    rows = []
    for name, table in tables.items():
        nll = table["nll"].to_numpy(dtype=float)
        rows.append(
            {
                "objective": name,
                "tokens": nll.size,
                "mean": nll.mean(),
                "median": float(np.median(nll)),
                f"share_below_{near_zero:g}": float((nll < near_zero).mean()),
                f"share_above_{tail:g}": float((nll > tail).mean()),
                "p90": float(np.quantile(nll, 0.9)),
                "p99": float(np.quantile(nll, 0.99)),
                "max": float(nll.max()),
            }
        )
    return pd.DataFrame(rows)


def by_time_step(
    tables: Mapping[str, pd.DataFrame], resamples: int = 1000, confidence: float = 0.95, seed: int = 0, min_count: int = 20
) -> pd.DataFrame:
    """Mean NLL and accuracy (argmax = reference token, in %) per time step t (1-based) with bootstrap
    intervals; columns `objective`, `measure` (`nll`/`accuracy`), `t`, `mean`, `low`, `high`, `count`.
    Steps reached by fewer than `min_count` references are left out."""
    parts = []
    for name, table in tables.items():
        frame = pd.DataFrame({"t": table["position"] + 1, "nll": table["nll"].astype(float), "accuracy": 100.0 * table["correct"]})
        for measure in ("nll", "accuracy"):
            stats = mean_with_interval(frame, "t", measure, resamples, confidence, seed, min_count)
            parts.append(stats.assign(objective=name, measure=measure))
    return pd.concat(parts, ignore_index=True)[["objective", "measure", "t", "mean", "low", "high", "count"]]
