"""Paired significance tests of a system against a baseline scored on the same examples, for any metric
whose corpus score follows from per-example sufficient statistics summed over a set of examples (BLEU's
n-gram counts, chrF's character n-gram counts, TER's edits and reference lengths, a per-example score such
as ROUGE F1 or exact match, NLL and token counts for perplexity).

The tests are sacrebleu's (`sacrebleu.significance`), generalised to every such metric and to several
training seeds at once (the delta is then the mean over seeds of the per-seed deltas, every seed resampled
or randomised with the same draw):

* **paired bootstrap** (`_paired_bs_test`, after Koehn 2004 and Moses): resample the examples with
  replacement; the p-value counts resamples whose centred absolute difference reaches the observed one,
  (c + 1) / (R + 1);
* **approximate randomization** (`_paired_ar_test`, Riezler & Maxwell 2005, multeval): swap each example's
  two outputs with probability 1/2; the p-value counts trials whose absolute difference reaches the
  observed one, (c + 1) / (T + 1). For a metric that is the mean of a per-example score this is the paired
  permutation test, which `paired_permutation` runs through scipy.

Across seeds, `seed_t_test` is the one-sample t-test of the per-seed deltas (for information: the test
that decides, seeds and the shared test set together, is comparisons/method_test.py's); `holm` adjusts a
family of p-values (Holm 1979: step-down Bonferroni).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy import stats

# score(summed statistics of shape (R, k), number of examples) -> the metric of each of the R rows
Score = Callable[[np.ndarray, int], np.ndarray]


def _p_value(samples: np.ndarray, observed: float) -> float:
    """(samples at least as extreme as the observed statistic + 1) / (samples + 1). sacrebleu and multeval
    count samples strictly above it, which gives a system compared with itself p = 1 / (samples + 1), as if
    it differed; counting ties, as permutation tests do (scipy's among them), gives it p = 1. Elsewhere the
    two agree but for exact ties."""
    tolerance = 1e-9 * max(1.0, abs(observed))
    return float((np.sum(samples >= observed - tolerance) + 1) / (samples.size + 1))


def mean_delta(system: Sequence[np.ndarray], baseline: Sequence[np.ndarray], score: Score, sums: Callable) -> np.ndarray:
    """The mean over seeds of score(system) - score(baseline), each side's statistics summed by `sums`."""
    deltas = [score(sums(ours), len(ours)) - score(sums(theirs), len(theirs)) for ours, theirs in zip(system, baseline, strict=True)]
    return np.mean(deltas, axis=0)


def observed_delta(system: Sequence[np.ndarray], baseline: Sequence[np.ndarray], score: Score) -> float:
    return float(mean_delta(system, baseline, score, lambda rows: rows.sum(axis=0)[None, :])[0])


def paired_bootstrap(
    system: Sequence[np.ndarray], baseline: Sequence[np.ndarray], score: Score, indices: np.ndarray, confidence: float = 0.95
) -> dict[str, float]:
    """Per seed the examples' statistics (n x k, the same examples in the same order on both sides);
    `indices` (R x n) the resamples. Returns the observed delta, the percentile interval of the resampled
    deltas, their standard error, sacrebleu's paired-bootstrap p-value, and the resampled deltas themselves."""
    observed = observed_delta(system, baseline, score)
    resampled = mean_delta(system, baseline, score, lambda rows: rows[indices].sum(axis=1))
    differences = np.abs(resampled)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(resampled, [tail, 100 - tail])
    return {
        "delta": observed,
        "low": float(low),
        "high": float(high),
        "se": float(resampled.std(ddof=1)),
        "p": _p_value(differences - differences.mean(), abs(observed)),
        "resampled": resampled,
    }


def approximate_randomization(system: Sequence[np.ndarray], baseline: Sequence[np.ndarray], score: Score, swaps: np.ndarray) -> float:
    """sacrebleu's approximate-randomization p-value; `swaps` (T x n booleans): where each trial takes the
    baseline's output for the system's pseudo-output (and the system's for the baseline's)."""
    observed = abs(observed_delta(system, baseline, score))
    trials = []
    for ours, theirs in zip(system, baseline, strict=True):
        mask = swaps.astype(ours.dtype)
        first = mask @ theirs + (1 - mask) @ ours
        second = (1 - mask) @ theirs + mask @ ours
        trials.append(score(first, len(ours)) - score(second, len(ours)))
    return _p_value(np.abs(np.mean(trials, axis=0)), observed)


def paired_permutation(system: np.ndarray, baseline: np.ndarray, resamples: int, seed: int) -> float:
    """The paired permutation test of a per-example score's mean (scipy.stats.permutation_test with
    permutation_type="samples": each example's two values are swapped or not), two-sided."""
    result = stats.permutation_test(
        (system, baseline),
        lambda x, y, axis: np.mean(x, axis=axis) - np.mean(y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=resamples,
        alternative="two-sided",
        random_state=np.random.default_rng(seed),
    )
    return float(result.pvalue)


def seed_t_test(deltas: np.ndarray) -> float:
    """Two-sided one-sample t-test of the per-seed deltas against 0 (NaN for fewer than two seeds, and where
    they all agree: with no spread the t statistic is undefined, not infinite; 1 when they are all 0)."""
    if deltas.size < 2:
        return float("nan")
    if np.allclose(deltas, deltas[0]):
        return 1.0 if np.isclose(deltas[0], 0.0) else float("nan")
    return float(stats.ttest_1samp(deltas, 0.0).pvalue)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of a family of p-values (NaN stays NaN and is not counted)."""
    values = np.asarray(p_values, dtype=float)
    adjusted = np.full(values.shape, np.nan)
    present = np.flatnonzero(~np.isnan(values))
    order = present[np.argsort(values[present], kind="stable")]
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(order) - rank) * values[index]))
        adjusted[index] = running
    return adjusted.tolist()
