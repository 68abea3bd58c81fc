"""Is an objective's difference to a baseline (MLE, or the control) more than noise? Two kinds of noise
decide a comparison of text generators: which examples happen to be in the test set, and which training
seed was drawn. Both are measured, on the same test set, pairing each objective's model with the
baseline's model of the same seed (comparisons/paired_tests.py holds the tests):

* **the test set**: sacrebleu's paired tests, on every metric's per-example sufficient statistics (for
  BLEU, chrF, chrF++ and TER exactly sacrebleu's; ROUGE, exact match and perplexity likewise): the paired
  bootstrap (its interval and standard error) and approximate randomization (`p_randomization`; for a
  mean of per-example scores, such as ROUGE F1, the paired permutation test through scipy, the same
  test). With several seeds the delta is the mean of the per-seed deltas, every seed drawn alike;
* **the seeds**: the per-seed deltas' Student's t interval and one-sample t-test (`p_seeds`; none for a
  single seed).

The decision is the test about the method that the claims use too (comparisons/method_test.py: the seeds'
variance of the mean delta plus the test set's variance shared by every seed, read from the examples
resampled jointly across seeds): its p-value `p` and interval (`low`, `high`). Its level holds at any number
of seeds (tests/test_method_test.py simulates it). With one seed it is the test set's alone: these models,
not the method. `p_holm` is Holm's adjustment across the objectives of one table (task, baseline and metric), and
"significant" means `p_holm` below 1 - confidence. `mde` is the smallest difference that test detects
with 80% power at Holm's strictest level (alpha / the comparisons of the family).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ..analysis.paper_comparison import ExampleStatistics, Run
from ..evaluation import metrics
from . import method_test, paired_tests
from .method_test import Noise

# Metrics that are the mean of a per-example score: their randomization test is the paired permutation test.
MEAN_METRICS = ("rouge1", "rouge2", "rougeL", "rougeLsum", "strict_match", "flexible_extract", "exact_match")


@dataclass(frozen=True)
class SeedDelta:
    seed: int
    delta: float
    low: float
    high: float


@dataclass(frozen=True)
class Comparison:
    """The system minus the baseline on one metric: the mean over seeds of the per-seed deltas; the test
    that decides (comparisons/method_test.py: the seeds' spread and the test set's shared variance, its
    interval and two-sided p-value); for information the test-set interval and randomization p-value,
    and the seed interval and t-test p-value (NaN for one seed)."""

    delta: float
    low: float
    high: float
    noise: Noise
    p: float
    test_low: float
    test_high: float
    seed_low: float
    seed_high: float
    p_randomization: float
    p_seeds: float
    seeds: tuple[SeedDelta, ...]

    @property
    def n_seeds(self) -> int:
        return len(self.seeds)

    def mde(self, alpha: float) -> float:
        """The difference the deciding test detects with 80% power at level `alpha`."""
        return method_test.minimum_detectable_effect(self.noise, alpha)


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
    trials: int = 10000,
) -> Comparison:
    """`system` minus `baseline` on `column` (bleu, chrf, chrf_pp, ter, rouge*, exact_match, perplexity),
    over the training seeds both have; every run must hold the same test examples in the same order."""
    seeds = sorted(set(system) & set(baseline))
    if not seeds:
        raise ValueError("the system and the baseline share no training seed")
    size = len(baseline[seeds[0]].ids)
    for seed in seeds:
        if system[seed].ids != baseline[seed].ids or baseline[seed].ids != baseline[seeds[0]].ids:
            raise ValueError(f"seed {seed}: the runs compared were scored on different examples")
    rng = np.random.default_rng(draw_seed)
    indices = rng.integers(0, size, size=(resamples, size))
    ours = [system[seed].statistics(column) for seed in seeds]
    theirs = [baseline[seed].statistics(column) for seed in seeds]
    score = system[seeds[0]].score_sums
    scorer = lambda sums, count: score(column, sums, count)  # noqa: E731 (the metric of summed statistics)
    per_seed, resampled = [], []
    for seed, mine, base in zip(seeds, ours, theirs, strict=True):
        one = paired_tests.paired_bootstrap([mine], [base], scorer, indices, confidence)
        per_seed.append(SeedDelta(seed, one["delta"], one["low"], one["high"]))
        resampled.append(one["resampled"])  # the same indices for every seed: joint resamples
    overall = paired_tests.paired_bootstrap(ours, theirs, scorer, indices, confidence)
    if column in MEAN_METRICS:
        p_randomization = paired_tests.paired_permutation(
            np.mean([mine[:, 0] for mine in ours], axis=0), np.mean([base[:, 0] for base in theirs], axis=0), trials, draw_seed
        )
    else:
        swaps = rng.integers(0, 2, size=(trials, size)).astype(bool)
        p_randomization = paired_tests.approximate_randomization(ours, theirs, scorer, swaps)
    points = np.array([item.delta for item in per_seed])
    seed_low, seed_high = seed_interval(points, confidence)
    noise = Noise.of(points, np.stack(resampled, axis=1))
    tail = (1 - confidence) / 2
    if noise.testable:
        p = method_test.p_two_sided(points, noise)
        low, high = method_test.lower_bound(points, noise, tail), method_test.upper_bound(points, noise, tail)
    else:  # no variance at all (every example shifted alike): the exact test on the test set
        p, low, high = p_randomization, float(points.mean()), float(points.mean())
    return Comparison(
        delta=float(points.mean()),
        low=low,
        high=high,
        noise=noise,
        p=p,
        test_low=overall["low"],
        test_high=overall["high"],
        seed_low=seed_low,
        seed_high=seed_high,
        p_randomization=p_randomization,
        p_seeds=paired_tests.seed_t_test(points),
        seeds=tuple(per_seed),
    )


# What `significant` says with one training seed: the seeds' spread is unmeasured, so no verdict on the method.
ONE_SEED = "one seed: these models on this test set"


def reading(row: Mapping) -> str:
    """What a row's yes or no means, in the adjusted p-value the decision used: significant, or not, with the
    difference the experiment could have detected (80% power at the Holm level) beside the one observed."""
    adjusted = row.get("p_holm", row["p"])
    if row["n_seeds"] < 2:  # these models differ on this test set, or not; whether the objective does is not tested
        held = "undefined: no variance" if adjusted != adjusted else f"{adjusted:.3f}"
        return f"{ONE_SEED}: the test-set bootstrap of these two models, p (Holm) {held}; nothing is said about the method"
    if row["significant"] == "yes":
        return "yes"
    held = "p (Holm) " + ("undefined: no variance" if adjusted != adjusted else f"{adjusted:.3f}")
    detectable = f"detectable ±{row['mde']:.2f}" if row["mde"] == row["mde"] else "nothing detectable"
    scope = "; one seed: on this test set, seed effects unmeasured" if row["n_seeds"] < 2 else ""
    if abs(row["delta"]) < row["mde"]:
        return f"no: smaller than the experiment detects ({held}; {detectable}{scope})"
    return f"no: not beyond the noise ({held}; {detectable}{scope})"


# The baselines every objective is compared with, where the experiment has them: MLE, and the control (MLE
# continued on the fine-tuning schedule: the same extra updates without any objective's weights).
BASELINES = {"mle": "MLE", "mle_continued": "control"}
# Reported beside the task metric where BLEU is the task metric (translation): chrF++ and TER, as MT papers do.
TRANSLATION_METRICS = ("chrf_pp", "ter")
COLUMNS = [
    "task",
    "objective",
    "baseline",
    "split",
    "decoder",
    "metric",
    "delta",
    "low",
    "high",
    "p",
    "p_holm",
    "significant",
    "mde",
    "reading",
    "n_seeds",
    "test_low",
    "test_high",
    "p_randomization",
    "seed_low",
    "seed_high",
    "p_seeds",
    "per_seed",
    "resamples",
    "trials",
    "confidence",
]


def compared_metrics(task_metric: str, scoring: metrics.Scoring) -> list[str]:
    """The task metric, then chrF++ and TER where the task's scoring reports them."""
    return [task_metric, *(TRANSLATION_METRICS if scoring.translation_metrics else ())]


def significance_table(
    runs: Sequence[Run],
    task_metrics: Mapping[str, str],
    scoring: Mapping[str, metrics.Scoring],
    resamples: int = 1000,
    confidence: float = 0.95,
    draw_seed: int = 0,
    trials: int = 10000,
) -> pd.DataFrame:
    """One row per task, metric, objective and baseline (each baseline of BASELINES the runs include; the
    control is compared with MLE, MLE with nothing): the comparison (see `compare`), Holm-adjusted across
    the objectives of each task, metric and baseline."""
    statistics: dict[str, dict[str, dict[int, ExampleStatistics]]] = {}
    where: dict[str, tuple[str, str]] = {}
    for run in runs:
        statistics.setdefault(run.task, {}).setdefault(run.objective, {})[run.seed] = ExampleStatistics(run, scoring[run.task])
        where[run.task] = (run.split, run.decoder)
    rows = []
    for task, by_objective in statistics.items():
        for metric in compared_metrics(task_metrics[task], scoring[task]):
            for baseline in (name for name in BASELINES if name in by_objective):
                family = []
                for objective, systems in by_objective.items():
                    if objective in (baseline, "mle"):  # MLE is the reference point, never the system compared
                        continue
                    result = compare(systems, by_objective[baseline], metric, resamples, confidence, draw_seed, trials)
                    family.append((result, _row(task, objective, baseline, where[task], metric, result, resamples, trials, confidence)))
                strictest = (1 - confidence) / max(1, len(family))  # Holm's first step: alpha / the comparisons
                for (result, row), adjusted in zip(family, paired_tests.holm([row["p"] for _, row in family]), strict=True):
                    row["mde"] = result.mde(strictest)
                    row["p_holm"] = adjusted
                    # one training seed: a test of these two models on this test set, never of the method
                    row["significant"] = ONE_SEED if result.n_seeds < 2 else "yes" if adjusted < 1 - confidence else "no"
                    row["reading"] = reading(row)
                rows += [row for _, row in family]
    return pd.DataFrame(rows, columns=COLUMNS)


def _row(task, objective, baseline, run, metric, result: Comparison, resamples, trials, confidence) -> dict:
    per_seed = "; ".join(f"{s.seed}: {s.delta:+.2f} [{s.low:.2f}, {s.high:.2f}]" for s in result.seeds)
    return {
        "task": task,
        "objective": objective,
        "baseline": baseline,
        "split": run[0],
        "decoder": run[1],
        "metric": metric,
        "delta": result.delta,
        "low": result.low,
        "high": result.high,
        "p": result.p,
        "n_seeds": result.n_seeds,
        "test_low": result.test_low,
        "test_high": result.test_high,
        "p_randomization": result.p_randomization,
        "seed_low": result.seed_low,
        "seed_high": result.seed_high,
        "p_seeds": result.p_seeds,
        "per_seed": per_seed,
        "resamples": resamples,
        "trials": trials,
        "confidence": confidence,
    }
