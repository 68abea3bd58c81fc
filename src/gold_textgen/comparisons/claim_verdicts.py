"""The registered claims of the paper (claims/paper_claims.py), tested on one experiment's outputs as
claims about the method.

Each test of a claim (`ClaimTest`: a claim, a task, a system, a baseline, a decoder) has a contrast per
training seed: a score difference, a log perplexity ratio, a difference of decoding drops, of token-NLL
shares or of length slopes (`CONTRASTS` of the registry). The contrast is computed on the test (or dev) set
and on resamples of its examples drawn jointly for every seed and every run, so the test about the method
(comparisons/method_test.py) weighs both the seeds' spread and the test set's noise that every seed shares.

The tests of one task are a family, decided at Holm-adjusted levels in each direction: **supported** (the
contrast is above 0), **contradicted** (below 0) or **inconclusive**. Each verdict prints its interval at the
level that decided it (the Holm step at which it was rejected, or at which the procedure stopped), so an
interval clear of 0 and the verdict always agree, and its p-values named as Holm-adjusted. Beside it: the
paper's effect size carried to this run (the registry's), the power of this run's design (its seeds, its
test set, its measured variances) to show it at Holm's strictest level, and the seeds that would reach 80%.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..analysis.paper_comparison import ExampleStatistics, Run
from ..claims.paper_claims import CLAIMS, ClaimTest
from . import method_test
from .method_test import Noise
from .paired_tests import holm

SUPPORTED, CONTRADICTED, INCONCLUSIVE = "supported", "contradicted", "inconclusive"
ALPHA = 0.05
# The per-example column each contrast reads ("task": the task's own metric).
COLUMNS = {
    "difference": "task",
    "log_ratio": "perplexity",
    "drop": "task",
    "share_below": "nll_below",
    "share_above": "nll_above",
    "length_slope": "length_slope",
}

# (objective, seed, split, decoder) -> that model's runs (several for a sampling decoder)
Runs = Mapping[tuple[str, int, str, str], Sequence[ExampleStatistics]]


def _score(runs: Runs, objective: str, seeds: Sequence[int], split: str, decoder: str, column: str, indices: np.ndarray) -> np.ndarray:
    """seeds x resamples: the column's score of each seed's model on each resample, sampling runs averaged."""
    return np.stack([np.mean([run.score(column, indices) for run in runs[objective, seed, split, decoder]], axis=0) for seed in seeds])


def contrast_of(test: ClaimTest, runs: Runs, seeds: Sequence[int], column: str, indices: np.ndarray) -> np.ndarray:
    """seeds x resamples: the claim's contrast (above 0: as claimed) on each row of example indices."""
    kind = CLAIMS[test.claim].contrast

    def score(objective: str, decoder: str) -> np.ndarray:
        return _score(runs, objective, seeds, test.split, decoder, column, indices)

    if kind == "log_ratio":
        return np.log(score(test.system, test.decoder)) - np.log(score(test.baseline, test.decoder))
    if kind == "drop":
        baseline_drop = score(test.baseline, "greedy") - score(test.baseline, test.decoder)
        return baseline_drop - (score(test.system, "greedy") - score(test.system, test.decoder))
    return score(test.system, test.decoder) - score(test.baseline, test.decoder)


@dataclass(frozen=True)
class Measured:
    """One claim test's per-seed contrasts, their noise, and the paper's effect in the contrast's units."""

    test: ClaimTest
    seeds: tuple[int, ...]
    contrasts: np.ndarray
    noise: Noise
    paper_effect: float | None


def measure(test: ClaimTest, runs: Runs, seeds: Sequence[int], task_metric: str, resamples: int, draw_seed: int) -> Measured:
    """The contrasts of `test` on its split's examples and on `resamples` joint resamples of them."""
    claim = CLAIMS[test.claim]
    column = COLUMNS[claim.contrast] if COLUMNS[claim.contrast] != "task" else task_metric
    size = len(runs[test.baseline, seeds[0], test.split, test.decoder][0].ids)
    observed = contrast_of(test, runs, seeds, column, np.arange(size)[None, :])[:, 0]
    indices = np.random.default_rng(draw_seed).integers(0, size, size=(resamples, size))
    resampled = contrast_of(test, runs, seeds, column, indices).T
    effect = None
    if claim.effect is not None:
        if claim.effect.scale == "log_ratio":
            effect = claim.effect.at(test.paper_row)
        else:  # a share of the baseline's mean score on this run (of greedy decoding, for a drop)
            decoder = "greedy" if claim.contrast == "drop" else test.decoder
            base = _score(runs, test.baseline, seeds, test.split, decoder, column, np.arange(size)[None, :])
            effect = claim.effect.at(test.paper_row) * float(base.mean())
    return Measured(test, tuple(seeds), observed, Noise.of(observed, resampled), effect)


def deciding_levels(p_values: Sequence[float], alpha: float) -> list[float]:
    """Per hypothesis, the level Holm's step-down procedure decided it at: alpha / (m - rank + 1) for those
    it rejected, and for the rest that of the step where it stopped (every later p is at least that step's,
    so each is above its own level)."""
    order = np.argsort(p_values, kind="stable")
    m = len(p_values)
    levels = [0.0] * m
    stopped = None
    for rank, index in enumerate(order):
        step = alpha / (m - rank)
        if stopped is None and not p_values[index] < step:
            stopped = step
        levels[index] = step if stopped is None else stopped
    return levels


@dataclass(frozen=True)
class Verdict:
    name: str
    statement: str
    task: str
    verdict: str
    estimate: float
    low: float  # lower bound at the "supported" direction's deciding level
    high: float  # upper bound at the "contradicted" direction's deciding level
    level_for: float
    level_against: float
    p_for: float  # one-sided, unadjusted
    p_against: float
    p_for_holm: float
    p_against_holm: float
    seeds: int
    per_seed: str
    seed_sd: float
    seed_floored: bool  # the seeds' spread fell below their seed-by-example noise, and that floor is their sd
    shared_sd: float
    paper_effect: float  # NaN: the paper gives no number
    paper_row: str  # the paper's row it comes from (the task's data set and model), or the median of its rows
    power: float  # this design's power to show the paper's effect at Holm's strictest level
    power_low: float  # the same at the ends of the seeds' variance's 80% interval (method_test.power_range)
    power_high: float
    seeds_needed: float  # NaN: no number of seeds (or no paper effect)
    detectable: float  # the smallest effect this design shows with 80% power at Holm's strictest level (contrast's units)
    reading: str
    ratio: bool  # estimate and bounds are ratios (log-ratio contrast)

    def line(self) -> str:
        shown = lambda value: f"{value:.3g}"  # noqa: E731
        confidence = (
            f"{100 * (1 - self.level_for):.4g}% bounds"
            if self.level_for == self.level_against
            else f"bounds at {100 * (1 - self.level_for):.4g}% / {100 * (1 - self.level_against):.4g}%"
        )
        decided = self.p_against_holm if self.verdict == CONTRADICTED else self.p_for_holm
        return (
            f"{self.verdict:12s} {self.name}: {self.statement}. Estimate {shown(self.estimate)}, {confidence} "
            f"[{shown(self.low)}, {shown(self.high)}], p (Holm-adjusted) {decided:.3g}; {self.reading} "
            f"({self.seeds} seeds: {self.per_seed})"
        )


def paper_row_label(test: ClaimTest) -> str:
    """Which of the paper's rows a test's paper effect comes from, as the verdict names it."""
    if CLAIMS[test.claim].effect is None:
        return "-"
    return f"the paper's {test.paper_row}" if test.paper_row else "the median of the paper's rows"


def where_the_paper_stands(effect: float, low: float, high: float, ratio: bool) -> str:
    """Where the paper's effect (contrast units) lies against the bounds that decided: beyond the upper
    bound (the run's effect is smaller than the paper's, which the run rules out at that level), below the
    lower bound (larger), or between them."""
    shown = (lambda value: f"ratio of {np.exp(value):.3g}") if ratio else (lambda value: f"{value:+.3g}")
    bound = (lambda value: f"{np.exp(value):.3g}") if ratio else (lambda value: f"{value:.3g}")
    if effect > high:
        return f"smaller than the paper's: its {shown(effect)} lies above the upper bound {bound(high)}, which rules it out"
    if effect < low:
        return f"larger than the paper's: its {shown(effect)} lies below the lower bound {bound(low)}"
    return f"the paper's {shown(effect)} lies within the bounds"


Powers = tuple[float, float, float]  # the power, and at the ends of the seeds' variance's 80% interval
Bounds = tuple[float, float]  # the lower and upper bounds at the levels that decided


def _reading(verdict: str, measured: Measured, powers: Powers, needed: int | None, effect: float | None, bounds: Bounds) -> str:
    """What the verdict says of the paper's claim: its direction (the verdict), and where the paper's
    effect stands against the bounds that decided; an inconclusive run that rules the paper's effect out is
    no design too small, and its seeds needed are not printed."""
    if measured.noise.seeds < 2:
        return "one seed: the seeds' spread is unmeasured, so nothing is said about the method"
    if effect is None:
        return "the paper gives no effect size to compute power against"
    ratio = CLAIMS[measured.test.claim].contrast == "log_ratio"
    stands = where_the_paper_stands(effect, *bounds, ratio)
    power, low, high = powers
    against = (
        f"{stands} ({paper_row_label(measured.test)}); power against it {power:.2f} at this design "
        f"({low:.2f}-{high:.2f} over the seeds' variance's 80% interval)"
    )
    if measured.noise.floored:
        against += "; the seeds' spread fell below their seed-by-example noise (the bootstrap's), which stands in for it"
    if verdict != INCONCLUSIVE or effect > bounds[1]:
        return against
    if needed is None:
        return against + "; no number of seeds detects it: the test set's shared noise alone is too large"
    return against + f"; {needed} seeds would detect it with 80% power"


def decide(measured: Sequence[Measured], alpha: float = ALPHA) -> list[Verdict]:
    """The verdicts of one family of claim tests (one task's), Holm in each direction."""
    p_for = [method_test.p_for(m.contrasts, m.noise) if m.noise.seeds > 1 else 1.0 for m in measured]
    p_against = [method_test.p_against(m.contrasts, m.noise) if m.noise.seeds > 1 else 1.0 for m in measured]
    levels_for, levels_against = deciding_levels(p_for, alpha), deciding_levels(p_against, alpha)
    holm_for, holm_against = holm(p_for), holm(p_against)
    strictest = alpha / max(1, len(measured))
    verdicts = []
    for index, m in enumerate(measured):
        testable = m.noise.seeds > 1
        low = method_test.lower_bound(m.contrasts, m.noise, levels_for[index]) if testable else float("-inf")
        high = method_test.upper_bound(m.contrasts, m.noise, levels_against[index]) if testable else float("inf")
        verdict = SUPPORTED if low > 0 else CONTRADICTED if high < 0 else INCONCLUSIVE
        effect = m.paper_effect if m.paper_effect is not None and m.paper_effect > 0 else None
        power = method_test.critical_power(effect, m.noise, strictest) if effect and testable else float("nan")
        power_low, power_high = method_test.power_range(effect, m.noise, strictest) if effect and testable else (float("nan"),) * 2
        needed = method_test.seeds_needed(effect, m.noise, strictest) if effect and testable else None
        # one-sided at the strictest level: the two-sided test at twice it has that level on each side
        detectable = method_test.minimum_detectable_effect(m.noise, 2 * strictest) if testable else float("nan")
        ratio = CLAIMS[m.test.claim].contrast == "log_ratio"
        shown = np.exp if ratio else (lambda value: value)
        verdicts.append(
            Verdict(
                name=m.test.name,
                statement=m.test.statement(),
                task=m.test.task,
                verdict=verdict,
                estimate=float(shown(m.contrasts.mean())),
                low=float(shown(low)),
                high=float(shown(high)),
                level_for=levels_for[index],
                level_against=levels_against[index],
                p_for=p_for[index],
                p_against=p_against[index],
                p_for_holm=holm_for[index],
                p_against_holm=holm_against[index],
                seeds=m.noise.seeds,
                per_seed=", ".join(f"{seed}: {float(shown(value)):.3g}" for seed, value in zip(m.seeds, m.contrasts, strict=True)),
                seed_sd=float(np.sqrt(m.noise.seed_variance)),
                seed_floored=m.noise.floored,
                shared_sd=float(np.sqrt(m.noise.shared)),
                paper_effect=float(shown(effect)) if effect else float("nan"),
                paper_row=paper_row_label(m.test),
                power=power,
                power_low=power_low,
                power_high=power_high,
                seeds_needed=float(needed) if needed else float("nan"),
                detectable=float(shown(detectable)) if testable else float("nan"),
                reading=_reading(verdict, m, (power, power_low, power_high), needed, effect, (low, high)),
                ratio=ratio,
            )
        )
    return verdicts


def claims_table(
    tests: Sequence[ClaimTest],
    runs: Mapping[str, Runs],
    seeds: Sequence[int],
    task_metrics: Mapping[str, str],
    resamples: int = 1000,
    draw_seed: int = 0,
    alpha: float = ALPHA,
) -> pd.DataFrame:
    """One row per claim test, each task's tests decided as one family; `runs` per task."""
    rows = []
    for task in dict.fromkeys(test.task for test in tests):
        chosen = [test for test in tests if test.task == task]
        measured = [measure(test, runs[task], seeds, task_metrics[task], resamples, draw_seed) for test in chosen]
        rows += [vars(verdict) | {"claim": test.claim} for verdict, test in zip(decide(measured, alpha), chosen, strict=True)]
    return pd.DataFrame(rows, columns=["claim", *Verdict.__dataclass_fields__])


def disagreement(verdict: Verdict) -> str | None:
    """Why a verdict read back cannot be the one `decide` wrote (None: it can): its direction must follow
    from its bounds (a ratio's against 1), which must be numbers ordered around a number estimate."""
    zero = 1.0 if verdict.ratio else 0.0
    numbers = (verdict.estimate, verdict.low, verdict.high)
    if any(isinstance(value, float) and np.isnan(value) for value in numbers):
        return f"estimate {verdict.estimate}, bounds [{verdict.low}, {verdict.high}]: not numbers"
    if not verdict.low <= verdict.estimate <= verdict.high:
        return f"estimate {verdict.estimate} outside its bounds [{verdict.low}, {verdict.high}]"
    implied = SUPPORTED if verdict.low > zero else CONTRADICTED if verdict.high < zero else INCONCLUSIVE
    if verdict.verdict != implied:
        return f"reads {verdict.verdict!r} where its bounds [{verdict.low:.4g}, {verdict.high:.4g}] say {implied!r}"
    return None


def verdicts_of(table: pd.DataFrame) -> list[Verdict]:
    """The verdicts of a claims table (tables/claims.csv) read back."""
    fields = list(Verdict.__dataclass_fields__)
    return [Verdict(**{field: row[field] for field in fields}) for row in table.to_dict("records")]


def runs_by_task(records: Sequence[Mapping], scoring: Mapping[str, object]) -> dict[str, Runs]:
    """The rule's run records (task, objective, seed, split, decoder, sample, generations, nll) as each
    task's runs by (objective, seed, split, decoder), sampling runs in their order."""
    runs: dict[str, dict[tuple[str, int, str, str], list[ExampleStatistics]]] = {}
    for record in records:
        run = Run(**record)
        key = (run.objective, run.seed, run.split, run.decoder)
        runs.setdefault(run.task, {}).setdefault(key, []).append(ExampleStatistics(run, scoring[run.task]))
    return runs
