"""Is an objective's difference to a baseline (MLE, or the control) more than noise? Two kinds of noise
decide a comparison of text generators: which examples happen to be in the test set, and which training
seed was drawn. Both are measured, on the same test set, pairing each objective's model with the
baseline's model of the same seed:

* **per seed, the test set**: a paired bootstrap over the test examples, as sacrebleu's paired bootstrap
  resampling does (`sacrebleu.significance._paired_bs_test`: one set of resampled example indices shared
  by both systems, each resample scored from summed per-example sufficient statistics: corpus BLEU from
  BLEU's n-gram counts, ROUGE as the mean of the per-example F1); the delta is the system's metric minus
  the baseline's, its interval the percentile interval of the resampled deltas;
* **across seeds**: the mean of the per-seed deltas, with two intervals: over the test set (the same
  resample indices for every seed, the percentile interval of the mean resampled delta) and over the seeds
  (Student's t on the per-seed deltas, n - 1 degrees of freedom; none for a single seed).

"Significant at 95%" is said only when every interval there is excludes 0: the test-set interval and,
with two or more seeds, the seed interval. A difference inside the seed spread is not significant
however many test examples there are, and a single seed can show a test-set difference, never a seed
effect (the tables say which).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ..evaluation import metrics
from . import objective_names
from .markdown import markdown_table
from .paper_comparison import ExampleStatistics, Run


@dataclass(frozen=True)
class SeedDelta:
    seed: int
    delta: float
    low: float
    high: float


@dataclass(frozen=True)
class Comparison:
    """The system minus the baseline on one metric: the mean over seeds of the per-seed deltas, its
    test-set interval (`test_low`, `test_high`), its seed interval (`seed_low`, `seed_high`: NaN for one
    seed), whether it is significant, and the per-seed paired-bootstrap deltas."""

    delta: float
    test_low: float
    test_high: float
    seed_low: float
    seed_high: float
    significant: bool
    seeds: tuple[SeedDelta, ...]

    @property
    def n_seeds(self) -> int:
        return len(self.seeds)


def seed_interval(deltas: np.ndarray, confidence: float) -> tuple[float, float]:
    """Student's t interval of the mean of `deltas` (NaN for fewer than two; zero width when they agree)."""
    if deltas.size < 2:
        return float("nan"), float("nan")
    half = stats.t.ppf(0.5 + confidence / 2, deltas.size - 1) * deltas.std(ddof=1) / np.sqrt(deltas.size)
    return float(deltas.mean() - half), float(deltas.mean() + half)


def compare(
    system: Mapping[int, ExampleStatistics],
    baseline: Mapping[int, ExampleStatistics],
    column: str,
    resamples: int = 1000,
    confidence: float = 0.95,
    draw_seed: int = 0,
) -> Comparison:
    """`system` minus `baseline` on `column` (bleu, rouge1, rouge2, rougeL, rougeLsum), over the training
    seeds both have; every run must hold the same test examples in the same order."""
    seeds = sorted(set(system) & set(baseline))
    if not seeds:
        raise ValueError("the system and the baseline share no training seed")
    size = len(baseline[seeds[0]].ids)
    for seed in seeds:
        if system[seed].ids != baseline[seed].ids or baseline[seed].ids != baseline[seeds[0]].ids:
            raise ValueError(f"seed {seed}: the runs compared were scored on different examples")
    full = np.arange(size)[None, :]
    indices = np.random.default_rng(draw_seed).integers(0, size, size=(resamples, size))
    tail = (1 - confidence) / 2 * 100
    per_seed, resampled = [], []
    for seed in seeds:
        point = float(system[seed].score(column, full)[0] - baseline[seed].score(column, full)[0])
        deltas = system[seed].score(column, indices) - baseline[seed].score(column, indices)
        low, high = np.percentile(deltas, [tail, 100 - tail])
        per_seed.append(SeedDelta(seed, point, float(low), float(high)))
        resampled.append(deltas)
    points = np.array([item.delta for item in per_seed])
    test_low, test_high = (float(v) for v in np.percentile(np.mean(resampled, axis=0), [tail, 100 - tail]))
    seed_low, seed_high = seed_interval(points, confidence)
    significant = _excludes_zero(test_low, test_high) and (len(seeds) < 2 or _excludes_zero(seed_low, seed_high))
    return Comparison(float(points.mean()), test_low, test_high, seed_low, seed_high, significant, tuple(per_seed))


def _excludes_zero(low: float, high: float) -> bool:
    return bool(low > 0 or high < 0)


def describe(comparison: Comparison) -> str:
    """`+0.52 [0.10, 0.95] seeds [0.31, 0.73] yes` for a table cell."""
    fields = {name: getattr(comparison, name) for name in ("delta", "test_low", "test_high", "seed_low", "seed_high", "n_seeds")}
    return cell({**fields, "significant": "yes" if comparison.significant else "no"})


METHOD_NOTE = (
    "Significance (delta = objective - baseline on the test set, the same training seed paired): per seed a "
    "paired bootstrap over the test examples (shared resample indices, sacrebleu's paired bootstrap resampling); "
    "across seeds the mean of the per-seed deltas with a test-set interval (percentile, {resamples} resamples) "
    "and, with two or more seeds, a seed interval (Student's t). 'significant' = every interval excludes 0 at "
    "{level:.0f}%."
)


# The baselines every objective is compared with, where the experiment has them: MLE, and the control (MLE
# continued on the fine-tuning schedule: the same extra updates without any objective's weights).
BASELINES = {"mle": "MLE", "mle_continued": "control"}
COLUMNS = [
    "task",
    "objective",
    "baseline",
    "split",
    "decoder",
    "metric",
    "delta",
    "test_low",
    "test_high",
    "seed_low",
    "seed_high",
    "n_seeds",
    "significant",
    "per_seed",
    "resamples",
    "confidence",
]


def significance_table(
    runs: Sequence[Run],
    task_metrics: Mapping[str, str],
    scoring: Mapping[str, metrics.Scoring],
    resamples: int = 1000,
    confidence: float = 0.95,
    draw_seed: int = 0,
) -> pd.DataFrame:
    """One row per task, objective and baseline (each baseline of BASELINES the runs include; the control
    is compared with MLE, MLE with nothing): the comparison on the task metric (see `compare`)."""
    statistics: dict[str, dict[str, dict[int, ExampleStatistics]]] = {}
    where: dict[str, tuple[str, str]] = {}
    for run in runs:
        statistics.setdefault(run.task, {}).setdefault(run.objective, {})[run.seed] = ExampleStatistics(run, scoring[run.task])
        where[run.task] = (run.split, run.decoder)
    rows = []
    for task, by_objective in statistics.items():
        metric = task_metrics[task]
        for baseline in (name for name in BASELINES if name in by_objective):
            for objective, systems in by_objective.items():
                if objective in (baseline, "mle"):  # MLE is the reference point, never the system compared
                    continue
                result = compare(systems, by_objective[baseline], metric, resamples, confidence, draw_seed)
                per_seed = "; ".join(f"{s.seed}: {s.delta:+.2f} [{s.low:.2f}, {s.high:.2f}]" for s in result.seeds)
                rows.append(
                    {
                        "task": task,
                        "objective": objective,
                        "baseline": baseline,
                        "split": where[task][0],
                        "decoder": where[task][1],
                        "metric": metric,
                        "delta": result.delta,
                        "test_low": result.test_low,
                        "test_high": result.test_high,
                        "seed_low": result.seed_low,
                        "seed_high": result.seed_high,
                        "n_seeds": result.n_seeds,
                        "significant": "yes" if result.significant else "no",
                        "per_seed": per_seed,
                        "resamples": resamples,
                        "confidence": confidence,
                    }
                )
    return pd.DataFrame(rows, columns=COLUMNS)


def cell(row: Mapping) -> str:
    """A significance row (or its fields) as one table cell: delta [test-set interval] seeds [seed interval] yes/no."""
    text = f"{row['delta']:+.2f} [{row['test_low']:.2f}, {row['test_high']:.2f}]"
    if row["n_seeds"] > 1:
        text += f" seeds [{row['seed_low']:.2f}, {row['seed_high']:.2f}]"
    return f"{text} {row['significant']}"


def with_significance(table: pd.DataFrame, significance: pd.DataFrame, keys: Sequence[str] = ("task", "objective")) -> pd.DataFrame:
    """`table` with, per baseline the significance table has, the columns `vs_<baseline>` (a cell text),
    `vs_<baseline>_delta`, `_test_low`, `_test_high`, `_seed_low`, `_seed_high` and `_significant`, filled on
    the rows that summarise seeds (`seed` == "mean", where the table has seeds) of the compared split and
    decoder (where the table has those), and empty elsewhere (the baseline's own rows included)."""
    table = table.copy()
    for baseline in (name for name in BASELINES if name in set(significance["baseline"])):
        part = significance[significance["baseline"] == baseline].copy()
        part[f"vs_{baseline}"] = part.apply(cell, axis=1)
        renamed = {name: f"vs_{baseline}_{name}" for name in ("delta", "test_low", "test_high", "seed_low", "seed_high", "significant")}
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


def method_note(resamples: int, confidence: float) -> str:
    return METHOD_NOTE.format(resamples=resamples, level=100 * confidence)


def note(significance: pd.DataFrame) -> str:
    """The markdown footer of a table with significance columns (empty when nothing was compared)."""
    if significance.empty:
        return ""
    first = significance.iloc[0]
    labels = ", ".join(f"`vs_{name}`: against {label}" for name, label in BASELINES.items() if name in set(significance["baseline"]))
    return f"\nColumns {labels}. " + method_note(int(first["resamples"]), float(first["confidence"])) + "\n"


def to_markdown(table: pd.DataFrame, resamples: int, confidence: float) -> str:
    rows = [
        [
            row.task,
            objective_names.label(row.objective),
            BASELINES[row.baseline],
            f"{row.metric} ({row.split}, {row.decoder})",
            cell(row._asdict()),
            row.per_seed,
        ]
        for row in table.itertuples(index=False)
    ]
    headers = ["task", "objective", "against", "metric", "delta [test-set interval] seeds [seed interval] significant", "per seed"]
    return markdown_table(headers, rows) + "\n" + method_note(resamples, confidence) + "\n"
