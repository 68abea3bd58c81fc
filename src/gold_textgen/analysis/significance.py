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

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .paper_comparison import ExampleStatistics


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
    text = f"{comparison.delta:+.2f} [{comparison.test_low:.2f}, {comparison.test_high:.2f}]"
    if comparison.n_seeds > 1:
        text += f" seeds [{comparison.seed_low:.2f}, {comparison.seed_high:.2f}]"
    return f"{text} {'yes' if comparison.significant else 'no'}"


METHOD_NOTE = (
    "Significance (delta = objective - baseline on the test set, the same training seed paired): per seed a "
    "paired bootstrap over the test examples (shared resample indices, sacrebleu's paired bootstrap resampling); "
    "across seeds the mean of the per-seed deltas with a test-set interval (percentile, {resamples} resamples) "
    "and, with two or more seeds, a seed interval (Student's t). 'significant' = every interval excludes 0 at "
    "{level:.0f}%."
)
