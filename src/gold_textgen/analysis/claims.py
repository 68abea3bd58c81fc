"""A claim about objectives as a test over training seeds: a one-sided hypothesis on a per-seed contrast,
reported as **supported** (the one-sided test rejects "not so" at level alpha), **contradicted** (the
opposite one-sided test rejects "so") or **inconclusive** (neither), with the estimate and its two-sided
1 - 2 alpha interval, whose lower end is above the claim's bound exactly when it is supported and whose
upper end is below it exactly when it is contradicted. No every-seed condition: one seed against the others
is what the t-test weighs, and adding seeds only adds power.

Three kinds of contrast (Student's t over seeds, seeds - 1 degrees of freedom):

* `difference_claim`: one score above another by more than a bound (GOLD-s's test BLEU above the
  control's), on the per-seed differences;
* `ratio_claim`: a ratio above a bound (GOLD's perplexity above MLE's: ratio > 1), tested on the per-seed
  log ratio; the estimate and interval are the geometric mean ratio and its interval;
* `ratio_of_means_claim`: one mean at least `bound` times another where either may be near 0 (MLE's
  BLEU drop from greedy decoding to sampling at least 3x GOLD-s's): the per-seed contrast a - bound x b,
  whose t-test is Fieller's test of the ratio of means; the interval is Fieller's for that ratio (unbounded
  when the denominator's mean is not itself clear of 0).

The claims of one experiment are a family: `holm_verdicts` decides them at Holm-adjusted levels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from .paired_tests import holm

SUPPORTED, CONTRADICTED, INCONCLUSIVE = "supported", "contradicted", "inconclusive"


@dataclass(frozen=True)
class Verdict:
    claim: str
    estimate: float
    low: float
    high: float
    p_for: float  # one-sided p of "not so" (small: supported)
    p_against: float  # one-sided p of "so" (small: contradicted)
    seeds: int
    detail: str
    contrasts: tuple[float, ...] = ()  # the per-seed contrasts the t-test weighs (for the power of a design)
    verdict: str = INCONCLUSIVE

    def line(self) -> str:
        return (
            f"{self.verdict:12s} {self.claim}: estimate {self.estimate:.3g}, interval [{self.low:.3g}, {self.high:.3g}], "
            f"one-sided p {self.p_for:.3g} ({self.seeds} seeds; {self.detail})"
        )


def _t_test(contrasts: np.ndarray, alpha: float) -> tuple[float, float, float, float]:
    """(mean, half-width of its two-sided 1 - 2 alpha interval, p for mean > 0, p for mean < 0) of per-seed
    contrasts; one seed or no spread decides nothing (p 1 both ways)."""
    mean = float(contrasts.mean())
    if contrasts.size < 2:
        return mean, float("inf"), 1.0, 1.0
    se = float(contrasts.std(ddof=1) / np.sqrt(contrasts.size))
    if se <= 1e-12 * max(1.0, abs(mean)):
        return mean, 0.0, 1.0, 1.0  # no spread: the t statistic is undefined, and nothing is shown
    freedom = contrasts.size - 1
    t = mean / se
    return mean, float(stats.t.isf(alpha, freedom)) * se, float(stats.t.sf(t, freedom)), float(stats.t.cdf(t, freedom))


def _decide(verdict: Verdict, alpha: float) -> Verdict:
    if verdict.p_for < alpha:
        return replace(verdict, verdict=SUPPORTED)
    if verdict.p_against < alpha:
        return replace(verdict, verdict=CONTRADICTED)
    return replace(verdict, verdict=INCONCLUSIVE)


def difference_claim(claim: str, a: Sequence[float], b: Sequence[float], bound: float = 0.0, alpha: float = 0.05) -> Verdict:
    """a - b > bound, per seed (paired by seed)."""
    contrasts = np.asarray(a, float) - np.asarray(b, float) - bound
    mean, half, p_for, p_against = _t_test(contrasts, alpha)
    detail = "per seed " + ", ".join(f"{x - y:+.3g}" for x, y in zip(a, b, strict=True))
    estimate = mean + bound
    verdict = Verdict(claim, estimate, estimate - half, estimate + half, p_for, p_against, contrasts.size, detail, tuple(contrasts))
    return _decide(verdict, alpha)


def ratio_claim(claim: str, numerators: Sequence[float], denominators: Sequence[float], bound: float = 1.0, alpha: float = 0.05) -> Verdict:
    """numerator / denominator > bound, per seed (positive values), on the log scale."""
    contrasts = np.log(np.asarray(numerators, float) / np.asarray(denominators, float)) - np.log(bound)
    mean, half, p_for, p_against = _t_test(contrasts, alpha)
    detail = "per seed " + ", ".join(f"{a:.3g} / {b:.3g}" for a, b in zip(numerators, denominators, strict=True))
    scale = lambda value: float(bound * np.exp(value))  # noqa: E731 (back from the log contrast to the ratio)
    low, high = scale(mean - half), scale(mean + half)
    return _decide(Verdict(claim, scale(mean), low, high, p_for, p_against, contrasts.size, detail, tuple(contrasts)), alpha)


def fieller_interval(a: np.ndarray, b: np.ndarray, alpha: float) -> tuple[float, float]:
    """Fieller's two-sided 1 - 2 alpha interval of mean(a) / mean(b) for paired per-seed values (NaN, inf
    where the denominator's mean is not clear of 0 at that level: the interval is then unbounded)."""
    n = a.size
    if n < 2:
        return float("-inf"), float("inf")
    t2 = float(stats.t.isf(alpha, n - 1)) ** 2
    covariance = np.cov(a, b, ddof=1) / n
    x, y = float(a.mean()), float(b.mean())
    quadratic = y * y - t2 * covariance[1, 1]
    linear = x * y - t2 * covariance[0, 1]
    constant = x * x - t2 * covariance[0, 0]
    discriminant = linear * linear - quadratic * constant
    if quadratic <= 0 or discriminant < 0:
        return float("-inf"), float("inf")
    root = np.sqrt(discriminant)
    return (linear - root) / quadratic, (linear + root) / quadratic


def ratio_of_means_claim(claim: str, a: Sequence[float], b: Sequence[float], bound: float, alpha: float = 0.05) -> Verdict:
    """mean(a) >= bound x mean(b) with mean(b) > 0: the per-seed contrast a - bound x b tested above 0."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    contrasts = a - bound * b
    _, _, p_for, p_against = _t_test(contrasts, alpha)
    low, high = fieller_interval(a, b, alpha)
    estimate = float(a.mean() / b.mean()) if b.mean() != 0 else float("inf")
    detail = "per seed " + ", ".join(f"{x:.3g} vs {y:.3g}" for x, y in zip(a, b, strict=True))
    return _decide(Verdict(claim, estimate, low, high, p_for, p_against, a.size, detail, tuple(contrasts)), alpha)


def holm_verdicts(verdicts: Sequence[Verdict], alpha: float = 0.05) -> list[Verdict]:
    """The verdicts of one family of claims, each decided at its Holm-adjusted level (for and against)."""
    adjusted_for = holm([verdict.p_for for verdict in verdicts])
    adjusted_against = holm([verdict.p_against for verdict in verdicts])
    return [
        _decide(replace(verdict, p_for=p_for, p_against=p_against), alpha)
        for verdict, p_for, p_against in zip(verdicts, adjusted_for, adjusted_against, strict=True)
    ]


def power(contrasts: Sequence[float], seeds: int, alpha: float) -> float:
    """The power of a claim's one-sided t-test with `seeds` seeds at level `alpha`, were the per-seed
    contrasts' true mean and spread those of `contrasts` (a pilot run's): the noncentral t's tail. For
    choosing how many seeds an experiment runs, not for reading a result."""
    values = np.asarray(contrasts, float)
    if values.size < 2 or seeds < 2:
        return float("nan")
    spread = float(values.std(ddof=1))
    if spread == 0:
        return 1.0 if values.mean() > 0 else 0.0
    shift = float(values.mean()) / spread * np.sqrt(seeds)
    return float(stats.nct.sf(stats.t.isf(alpha, seeds - 1), seeds - 1, shift))
