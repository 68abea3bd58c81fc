"""The significance table as readers see it (comparisons/significance.py computes it): its markdown, the cell
that Table 1, the main table and the objectives table show per baseline, and the method note."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..analysis import objective_names
from ..analysis.markdown import markdown_table
from .significance import BASELINES, TRANSLATION_METRICS

METHOD_NOTE = (
    "Significance (delta = objective - baseline on the test set, the same training seed paired; for TER lower is "
    "better): the mean per-seed delta tested against 0 as a claim about the method, with both sources of noise: the "
    "seeds' variance of the mean plus the test set's variance that every seed shares (the covariance of two seeds' "
    "deltas over {resamples} joint paired-bootstrap resamples of each metric's per-example statistics, as sacrebleu "
    "resamples them), the seeds' variance integrated over its chi-square and never below their seed-by-example variance "
    "(what the same resamples show of one seed's own noise): its {level:g}% interval and p; "
    "'significant' = p, "
    "Holm-adjusted across the objectives compared with the same baseline on the same task and metric, below {alpha:g} "
    "(the interval is not adjusted, so with several objectives an interval that excludes 0 may still read no); with one "
    "training seed it reads 'one seed: these models on this test set' (the test-set bootstrap alone: no verdict on the "
    "method, whose seeds' spread is unmeasured). mde: the "
    "difference this test detects with 80% power at Holm's strictest level. For information: the test-set "
    "bootstrap interval of these models, {trials} approximate-randomization trials (p_randomization; for ROUGE and exact match the "
    "paired permutation test; trials as extreme as the observed delta count, ties included, as exact enumeration does: "
    "sacrebleu counts only those beyond it, which understates p), and the per-seed deltas' t interval and t-test (p_seeds)."
)


def cell(row: Mapping) -> str:
    """A significance row (or its fields) as one table cell: delta [interval of the deciding test] p (Holm)
    yes/no."""
    text = f"{row['delta']:+.2f} [{row['low']:.2f}, {row['high']:.2f}]"
    if "p_holm" in row and row["p_holm"] == row["p_holm"]:
        text += f" p {row['p_holm']:.3f}"
    return f"{text} {row['significant']}"


def with_significance(table: pd.DataFrame, significance: pd.DataFrame, keys: Sequence[str] = ("task", "objective")) -> pd.DataFrame:
    """`table` with, per baseline the significance table has, the columns `vs_<baseline>` (a cell text),
    `vs_<baseline>_delta`, `_low`, `_high`, `_p_holm`, `_significant` and `_mde`, of the task metric, filled on
    the rows that summarise seeds (`seed` == "mean", where the table has seeds) of the compared split and
    decoder (where the table has those), and empty elsewhere (the baseline's own rows included)."""
    table = table.copy()
    significance = significance[~significance["metric"].isin(TRANSLATION_METRICS)]  # the task metric's rows
    for baseline in (name for name in BASELINES if name in set(significance["baseline"])):
        part = significance[significance["baseline"] == baseline].copy()
        part[f"vs_{baseline}"] = part.apply(cell, axis=1)
        shown = ("delta", "low", "high", "p_holm", "significant", "mde")
        renamed = {name: f"vs_{baseline}_{name}" for name in shown}
        part = part.rename(columns=renamed)
        join = [*keys, *(k for k in ("split", "decoder") if k in table.columns)]
        columns = [*join, f"vs_{baseline}", *renamed.values()]
        merged = table.merge(part[columns], on=join, how="left")
        if "seed" in table.columns:
            merged.loc[merged["seed"].astype(str) != "mean", columns[len(join) :]] = np.nan
        table = merged
    return table


def significance_columns(table: pd.DataFrame) -> list[str]:
    """The cell-text columns `with_significance` added, in BASELINES order."""
    return [f"vs_{name}" for name in BASELINES if f"vs_{name}" in table.columns]


def method_note(resamples: int, confidence: float, trials: int = 10000) -> str:
    return METHOD_NOTE.format(resamples=resamples, trials=trials, alpha=round(1 - confidence, 6), level=round(100 * confidence, 6))


def note(significance: pd.DataFrame) -> str:
    """The markdown footer of a table with significance columns (empty when nothing was compared)."""
    if significance.empty:
        return ""
    first = significance.iloc[0]
    labels = ", ".join(f"`vs_{name}`: against {label}" for name, label in BASELINES.items() if name in set(significance["baseline"]))
    return f"\nColumns {labels}. " + method_note(int(first["resamples"]), float(first["confidence"]), int(first["trials"])) + "\n"


def _seeds_alone(row) -> str:
    if row.n_seeds < 2:
        return "-"
    p_seeds = "-" if row.p_seeds != row.p_seeds else f"{row.p_seeds:.3f}"
    return f"[{row.seed_low:.2f}, {row.seed_high:.2f}] / {p_seeds}"


def to_markdown(table: pd.DataFrame, resamples: int, confidence: float, trials: int = 10000) -> str:
    rows = [
        [
            row.task,
            objective_names.label(row.objective),
            BASELINES[row.baseline],
            f"{row.metric} ({row.split}, {row.decoder})",
            cell(row._asdict()),
            f"{row.mde:.2f}",
            row.reading,
            f"[{row.test_low:.2f}, {row.test_high:.2f}] / {row.p_randomization:.3f}",
            _seeds_alone(row),
            row.per_seed,
        ]
        for row in table.itertuples(index=False)
    ]
    headers = [
        "task",
        "objective",
        "against",
        "metric",
        "delta [interval] p (Holm) significant",
        "mde",
        "reading",
        "test set alone: interval / p randomization",
        "seeds alone: interval / p t-test",
        "per seed",
    ]
    caption = (
        "Each objective against MLE and against the control (MLE continued for the same updates), on the test split "
        "with the first table decoder."
    )
    return caption + "\n\n" + markdown_table(headers, rows) + "\n" + method_note(resamples, confidence, trials) + "\n"
