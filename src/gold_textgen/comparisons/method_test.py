"""Is a difference between two methods more than noise? One test for the claims, the significance tables
and the objectives table, about the *method*, not about the models one run happened to train.

A run gives, per training seed s, a contrast d_s (a system's score minus a baseline's, a log ratio, ...)
measured on one test set that every seed shares. Two kinds of noise separate the mean contrast from the
method's true effect, and the test counts each once:

* **the seeds'**: d_s varies from seed to seed (the seed's own effect and how that seed's models meet the
  test examples); its part of the mean's variance is the per-seed contrasts' sample variance / S;
* **the test set's, shared by every seed**: which examples happen to be in the test set moves every seed's
  contrast alike, and does not shrink with more seeds. `shared_variance` measures it from the examples
  resampled jointly across seeds (the same resampled examples for every seed): the covariance of two seeds'
  resampled contrasts, averaged over the pairs of seeds. (The bootstrap variance of the seed mean would
  count the seed-by-example part a second time, as it is already in the seeds' spread.)

The seeds' variance is their sample variance, floored at the seed-by-example variance the same resamples show
(`seed_by_example_variance`): three seeds often agree by chance more closely than their own noise allows, and a
test that read that spread would reject too often given it (tests/test_method_test.py simulates that case).

The statistic is the mean contrast over sqrt(seed variance / S + shared variance). Its null distribution is
a scale mixture of normals, the seeds' variance being known only up to a chi-square with S - 1 degrees of
freedom and the shared one to the test set's size (hundreds of examples): `p_above` integrates over the
former (the generalized p-value of a mean with one estimated and one known variance component, Tsui &
Weerahandi 1989). With no shared variance it is Student's t-test over the seeds exactly; with no seed
spread the normal test on the test set; in between it has no degrees of freedom to jump, and its level holds
at every mix and any number of seeds (tests/test_method_test.py simulates 3, 5 and 10 seeds), where
Satterthwaite's degrees of freedom reject up to 6% of true nulls at 3 seeds.

The bounds invert the same test (`lower_bound`, `upper_bound`): a bound at one-sided level gamma lies on the
far side of 0 exactly when the test rejects at gamma, so a verdict and its printed interval always agree.
`critical_power` gives the power of the test for a true effect, with the run's own measured variances, and
`seeds_needed` the number of seeds that reach 80%. The p-values a verdict prints and its bounds (`p_for`,
`p_against`) are integrated on the chi-square's log scale, exact in the tail (tests/test_method_test.py
checks them against Student's t and adaptive quadrature down to 1e-8); the simulations and the power read
the quantile grid, which is exact where a decision at 5% is made.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

POWER = 0.8
# Quantiles of the seeds' chi-square at which the mixture is integrated (midpoint rule on the probability
# scale: exact for a one-seed-pair t distribution to 1e-4 of p, more than enough for a 5% decision).
GRID = 2000
# Seeds' variance estimates at which the power integrates the test's critical value, and the coarser
# mixture grid each of those critical values is found on (power is read to a percent, not a p-value).
POWER_GRID = 32
POWER_GRID_P = 200
MOST_SEEDS = 200


def shared_variance(resampled: np.ndarray) -> float:
    """The test set's variance of the contrast, shared by every seed: `resampled` holds R resamples (rows)
    of S seeds' contrasts (columns), each row scored on the same resampled examples for every seed. The
    mean covariance between two seeds' columns, not below 0; with one seed its column's variance (seed and
    shared parts cannot then be told apart)."""
    values = np.asarray(resampled, float)
    if values.ndim != 2 or values.shape[0] < 2:
        raise ValueError("shared_variance needs resamples x seeds contrasts, at least two resamples")
    seeds = values.shape[1]
    covariance = np.atleast_2d(np.cov(values, rowvar=False, ddof=1))
    if seeds == 1:
        return float(covariance[0, 0])
    off_diagonal = (covariance.sum() - np.trace(covariance)) / (seeds * (seeds - 1))
    return float(max(off_diagonal, 0.0))


def seed_by_example_variance(resampled: np.ndarray) -> float:
    """The part of one seed's resampled contrast that is its own (the seed-by-example noise): the seeds'
    mean resampled variance less the covariance they share, not below 0; 0 with one seed. Every seed's
    models meet the test examples their own way, so a seed's contrast varies at least this much from seed to
    seed on a fixed test set: a floor under the seeds' variance that three seeds' sample variance can fall
    far below."""
    values = np.asarray(resampled, float)
    if values.ndim != 2 or values.shape[1] < 2:
        return 0.0
    own = float(np.mean(np.var(values, axis=0, ddof=1)))
    floor = own - shared_variance(values)
    return floor if floor > 1e-9 * own else 0.0  # seeds that meet every example alike: float rounding, no variance


@dataclass(frozen=True)
class Noise:
    """The two variances of one mean per-seed contrast: `seed_variance` of one seed's contrast (the per-seed
    contrasts' sample variance, not below `floor`), `shared` of the test set's part common to every seed,
    over `seeds` seeds. `floor` is the seed-by-example variance the joint resamples show (0 when unknown)."""

    seed_variance: float
    shared: float
    seeds: int
    floor: float = 0.0

    @classmethod
    def of(cls, contrasts: np.ndarray, resampled: np.ndarray) -> Noise:
        """From the observed per-seed contrasts and their joint resamples (R x S). The seeds' variance is
        floored at the seed-by-example variance (`seed_by_example_variance`): the mean contrast is
        independent of the seeds' sample variance, so a test that reads a spread that fell below a known
        lower bound of its true value would reject too often given that small spread (the level would hold
        only on average); with the floor the test is conservative there (tests/test_method_test.py)."""
        contrasts = np.asarray(contrasts, float)
        spread = float(contrasts.var(ddof=1)) if contrasts.size > 1 else 0.0  # one seed: the test set's noise alone
        rounding = (1e-9 * max(1.0, float(np.abs(contrasts).max()))) ** 2  # float rounding of equal values is no variance
        shared = shared_variance(resampled)
        floor = seed_by_example_variance(resampled) if contrasts.size > 1 else 0.0
        floor = floor if floor > rounding else 0.0
        spread = max(spread if spread > rounding else 0.0, floor)
        return cls(spread, shared if shared > rounding else 0.0, contrasts.size, floor)

    @property
    def floored(self) -> bool:
        """Whether the seeds' variance is the floor, their sample variance having fallen below it."""
        return self.floor > 0 and self.seed_variance <= self.floor

    @property
    def variance(self) -> float:
        """The variance of the mean contrast as an estimate of the method's effect."""
        return self.seed_variance / self.seeds + self.shared

    @property
    def testable(self) -> bool:
        """Some noise at all (one seed: the test set's alone, a test of these models, not of the method)."""
        return bool(np.isfinite(self.variance) and self.variance > 0)

    def at(self, seeds: int) -> Noise:
        """The same variances for a design with another number of seeds."""
        return Noise(self.seed_variance, self.shared, seeds, self.floor)


def _chi_square_grid(freedom: int, points: int) -> np.ndarray:
    return stats.chi2.ppf((np.arange(points) + 0.5) / points, freedom)


def p_above(mean, seed_variance_of_mean, shared, seeds: int, points: int = GRID) -> np.ndarray:
    """One-sided p of "the effect is at most 0" for mean contrasts `mean` (any shape, as are the two variances:
    the seeds' variance of the mean, seed_variance / S, and the shared one), over `seeds` seeds: the chance,
    under the null, of a mean this large, the seeds' variance drawn from its chi-square."""
    mean, seed_part, shared = np.broadcast_arrays(*(np.asarray(x, float) for x in (mean, seed_variance_of_mean, shared)))
    freedom = max(seeds - 1, 1)  # one seed has no seeds' variance (0): the grid is then never read
    grid = _chi_square_grid(freedom, points)
    scale = np.sqrt(seed_part[..., None] * freedom / grid + shared[..., None])
    with np.errstate(divide="ignore", invalid="ignore"):
        p = stats.norm.sf(mean[..., None] / scale).mean(axis=-1)
    silent = (seed_part + shared) <= 0  # no noise at all: nothing is shown either way
    return np.where(silent, 1.0, p)


# The seeds' chi-square is integrated between these tail probabilities (what lies beyond adds under 1e-30),
# on this many points evenly spaced on its log scale: the trapezoid rule on that smooth, fast-decaying
# integrand is exact to 1e-12 of p (tests/test_method_test.py compares it with adaptive quadrature).
TAIL = 1e-30
LOG_POINTS = 1200


@functools.cache
def _log_scale_nodes(freedom: int) -> tuple[np.ndarray, np.ndarray]:
    """The chi-square values and trapezoid weights (density times spacing) of `freedom`'s log-scale grid."""
    log_w = np.linspace(np.log(stats.chi2.ppf(TAIL, freedom)), np.log(stats.chi2.isf(TAIL, freedom)), LOG_POINTS)
    weights = np.exp(stats.chi2.logpdf(np.exp(log_w), freedom) + log_w) * (log_w[1] - log_w[0])
    weights[[0, -1]] /= 2
    return np.exp(log_w), weights


def p_above_exact(mean: float, seed_variance_of_mean: float, shared: float, seeds: int) -> float:
    """`p_above` for one mean, integrated on the log scale of the seeds' chi-square instead of on a fixed
    grid of its quantiles, so that a small p is right too: the quantile grid's first point lies at the
    1/4000 quantile, and a p of 1e-5 comes from below it. Closed forms where one variance is 0: the normal
    test (the shared variance alone) and Student's t (the seeds' alone)."""
    freedom = max(seeds - 1, 1)
    if seed_variance_of_mean <= 0 or seeds < 2:
        return float(special.ndtr(-mean / np.sqrt(shared))) if shared > 0 else 1.0
    if shared <= 0:
        return float(stats.t.sf(mean / np.sqrt(seed_variance_of_mean), freedom))
    chi_square, weights = _log_scale_nodes(freedom)
    p = float(np.dot(special.ndtr(-mean / np.sqrt(seed_variance_of_mean * freedom / chi_square + shared)), weights))
    return min(max(p, 0.0), 1.0)


def p_for(contrasts: np.ndarray, noise: Noise, bound: float = 0.0) -> float:
    """One-sided p of "the mean contrast is at most `bound`" (small: the contrast is above it)."""
    if not noise.testable:
        return 1.0
    return p_above_exact(float(np.mean(contrasts)) - bound, noise.seed_variance / noise.seeds, noise.shared, noise.seeds)


def p_against(contrasts: np.ndarray, noise: Noise, bound: float = 0.0) -> float:
    """One-sided p of "the mean contrast is at least `bound`" (small: the contrast is below it)."""
    if not noise.testable:
        return 1.0
    return p_above_exact(bound - float(np.mean(contrasts)), noise.seed_variance / noise.seeds, noise.shared, noise.seeds)


def p_two_sided(contrasts: np.ndarray, noise: Noise) -> float:
    return min(1.0, 2 * min(p_for(contrasts, noise), p_against(contrasts, noise)))


def _invert(p_of_bound, level: float, estimate: float, scale: float, upward: bool) -> float:
    """The bound b where p_of_bound(b) crosses `level`, searched from the estimate away from it."""
    step = max(scale, 1e-12)
    sign = 1.0 if upward else -1.0
    far = estimate + sign * step
    for _ in range(200):
        if p_of_bound(far) < level:
            break
        step *= 2
        far = estimate + sign * step
    else:
        return sign * float("inf")
    if p_of_bound(estimate) < level:  # the estimate itself is rejected: cannot happen for a sane level < 1/2
        return estimate
    return float(optimize.brentq(lambda b: p_of_bound(b) - level, *sorted((estimate, far)), xtol=1e-10 * max(1.0, abs(estimate))))


def lower_bound(contrasts: np.ndarray, noise: Noise, level: float) -> float:
    """The one-sided 1 - level lower confidence bound of the mean contrast: above a bound b exactly when
    p_for(b) < level. -inf when nothing can be said."""
    if not noise.testable:
        return float("-inf")
    estimate = float(np.mean(contrasts))
    return _invert(lambda b: p_for(contrasts, noise, b), level, estimate, np.sqrt(noise.variance), upward=False)


def upper_bound(contrasts: np.ndarray, noise: Noise, level: float) -> float:
    """The one-sided 1 - level upper confidence bound: below a bound b exactly when p_against(b) < level."""
    if not noise.testable:
        return float("inf")
    estimate = float(np.mean(contrasts))
    return _invert(lambda b: p_against(contrasts, noise, b), level, estimate, np.sqrt(noise.variance), upward=True)


def _critical_means(noise: Noise, level: float) -> np.ndarray:
    """The mean contrast above which the one-sided test rejects at `level`, for each of POWER_GRID
    equally likely estimates of the seeds' variance (the true variances being `noise`'s): bisection on all
    of them at once, between 0 and a mean that every scale of the mixture rejects."""
    freedom = max(noise.seeds - 1, 1)  # one seed: no seeds' variance, the grid multiplies 0
    seed_parts = noise.seed_variance * _chi_square_grid(freedom, POWER_GRID) / freedom / noise.seeds
    largest = np.sqrt(seed_parts * freedom / _chi_square_grid(freedom, POWER_GRID_P)[0] + noise.shared)
    low, high = np.zeros(POWER_GRID), stats.norm.isf(level) * largest
    for _ in range(32):  # to 2^-32 of the bracket: far below a printed difference
        middle = (low + high) / 2
        rejected = p_above(middle, seed_parts, noise.shared, noise.seeds, POWER_GRID_P) < level
        low, high = np.where(rejected, low, middle), np.where(rejected, middle, high)
    return high


def critical_power(effect: float, noise: Noise, level: float) -> float:
    """The chance the one-sided test at `level` shows a true effect `effect` (above 0) with `noise`'s
    variances and number of seeds (one seed: the test set's noise alone)."""
    if not noise.testable:
        return float("nan")
    critical = _critical_means(noise, level)
    return float(stats.norm.sf((critical - effect) / np.sqrt(noise.variance)).mean())


# How sure a printed power is: the seeds' variance is one chi-square draw, and the power is recomputed at
# the ends of that variance's central interval of this probability.
POWER_INTERVAL = 0.8


def power_range(effect: float, noise: Noise, level: float, interval: float = POWER_INTERVAL) -> tuple[float, float]:
    """The power at the two ends of the seeds' variance's `interval` confidence interval (the measured
    variance times freedom over the chi-square's upper and lower quantiles), lowest first: a power read off
    three seeds' variance can be far from the design's."""
    if not noise.testable or noise.seeds < 2:
        return float("nan"), float("nan")
    freedom = noise.seeds - 1
    tail = (1 - interval) / 2
    largest = noise.seed_variance * freedom / stats.chi2.ppf(tail, freedom)
    smallest = max(noise.seed_variance * freedom / stats.chi2.isf(tail, freedom), noise.floor)  # never below the floor
    return (
        critical_power(effect, Noise(largest, noise.shared, noise.seeds, noise.floor), level),
        critical_power(effect, Noise(smallest, noise.shared, noise.seeds, noise.floor), level),
    )


def limit_power(effect: float, noise: Noise, level: float) -> float:
    """The power with unboundedly many seeds: the shared test-set noise alone remains."""
    if noise.shared <= 0:
        return 1.0 if effect > 0 else level
    return float(stats.norm.sf(stats.norm.isf(level) - effect / np.sqrt(noise.shared)))


def seeds_needed(effect: float, noise: Noise, level: float, target: float = POWER) -> int | None:
    """The fewest seeds (2 or more) with which the test shows `effect` with power `target`, were the
    variances those of `noise`; None when no number of seeds does (the shared noise alone is too large, or
    the effect is not above 0)."""
    if not effect > 0 or noise.seeds < 2 or limit_power(effect, noise, level) < target:
        return None
    low, high = 2, 2
    while critical_power(effect, noise.at(high), level) < target:
        if high >= MOST_SEEDS:
            return None
        low, high = high, min(2 * high, MOST_SEEDS)
    if critical_power(effect, noise.at(low), level) >= target:
        return low
    while high - low > 1:  # power rises with seeds: the first that reaches the target
        middle = (low + high) // 2
        low, high = (low, middle) if critical_power(effect, noise.at(middle), level) >= target else (middle, high)
    return high


def minimum_detectable_effect(noise: Noise, alpha: float) -> float:
    """The smallest true difference the two-sided test at level `alpha` detects with 80% power (its side
    away from 0 at alpha / 2; the other side's rejections are negligible there)."""
    if not noise.testable:
        return float("nan")
    critical = _critical_means(noise, alpha / 2)
    scale = np.sqrt(noise.variance)
    power = lambda effect: float(stats.norm.sf((critical - effect) / scale).mean()) - POWER  # noqa: E731
    high = float(critical.max()) + 3 * scale
    return float(optimize.brentq(power, 0.0, high, xtol=1e-9 * scale))
