"""The demo's claims, checked on a finished run's files (`make demo` prints this after the tables).

    python -m gold_textgen.analysis.demo_signatures [--results results/demo] [--task demo]

Each claim compares GOLD with MLE and with the control (`mle_continued`: MLE on GOLD's schedule), per
training seed, and holds only when it holds on every seed and the Student-t 95% interval of the mean
difference over seeds lies on its side of zero (with one seed: that seed's difference):

* every run (MLE and every fine-tuning run) ended before its step cap stopped a rising dev metric;
* every GOLD model's test perplexity is above MLE's and the control's (GOLD gives up on unlikely tokens);
* the BLEU that top-k 20 sampling loses against greedy decoding (dev) is at least 3x smaller for GOLD-s
  than for MLE and for the control.

Greedy test BLEU is not a claim: on this task GOLD-s and MLE differ by less than the seed spread, and the
significance table (results/demo/tables/significance.md) says so. It is printed for information.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from ..workflow.convergence import run_summary
from .significance import TRANSLATION_METRICS, seed_interval
from .tables import average_sample_runs, load_scores

GOLD = ("gold_delta", "gold_p", "gold_s")
BASELINES = {"mle": "MLE", "mle_continued": "the control"}
CONFIDENCE = 0.95
DROP_RATIO = 3.0


def run_convergence(results: Path, task: str) -> list[tuple[str, bool, str]]:
    """One check per trained model: its step cap did not stop it while its dev metric still rose."""
    checks = []
    for model in sorted((results / "models" / task).glob("*/seed*")):
        summary = run_summary(model)
        detail = (
            f"{summary['global_step']} of {summary['max_steps']} updates; best dev {summary['metric']} at update "
            f"{summary['selected_step']}, last evaluation at {summary['last_eval_step']}"
        )
        claim = f"{model.parent.name} {model.name} ended before its cap stopped it improving"
        checks.append((claim, not summary["still_improving"], detail))
    return checks


def _holds(differences: np.ndarray) -> tuple[bool, str]:
    """Every seed's difference above 0, and the seed interval of their mean too (two seeds or more)."""
    low, high = seed_interval(differences, CONFIDENCE)
    interval = f"seed interval [{low:.2f}, {high:.2f}]" if differences.size > 1 else "one seed"
    return bool((differences > 0).all() and (differences.size < 2 or low > 0)), interval


def _per_seed(scores: pd.DataFrame, split: str, decoder: str, metric: str) -> pd.DataFrame:
    """objective x seed: `metric` of the split and decoder, sampling runs averaged."""
    chosen = scores[(scores["split"] == split) & (scores["decoder"] == decoder)]
    runs = average_sample_runs(chosen, [metric])
    return runs.pivot_table(index="seed", columns="objective", values=metric)


def perplexity_claims(scores: pd.DataFrame, split: str, decoder: str) -> list[tuple[str, bool, str]]:
    table = _per_seed(scores, split, decoder, "perplexity")
    checks = []
    for gold in (g for g in GOLD if g in table.columns):
        for baseline, name in BASELINES.items():
            differences = (table[gold] - table[baseline]).to_numpy()
            holds, interval = _holds(differences)
            seeds = ", ".join(f"{table.loc[s, gold]:.2f} vs {table.loc[s, baseline]:.2f}" for s in table.index)
            checks.append((f"{gold} test perplexity above {name}'s", holds, f"per seed {seeds}; {interval}"))
    return checks


def sampling_claims(scores: pd.DataFrame, split: str) -> list[tuple[str, bool, str]]:
    greedy, sampled = _per_seed(scores, split, "greedy", "bleu"), _per_seed(scores, split, "topk20", "bleu")
    drop = greedy - sampled
    checks = []
    for baseline, name in BASELINES.items():
        # the baseline's drop beyond 3x GOLD-s's, per seed
        margins = (drop[baseline] - DROP_RATIO * drop["gold_s"]).to_numpy()
        holds, interval = _holds(margins)
        seeds = ", ".join(f"{drop.loc[s, baseline]:.2f} vs {drop.loc[s, 'gold_s']:.2f}" for s in drop.index)
        checks.append((f"{name}'s greedy -> top-k 20 drop >= {DROP_RATIO:g}x GOLD-s's", holds, f"per seed {seeds}; {interval}"))
    return checks


def bleu_information(results: Path, task: str) -> list[str]:
    """GOLD-s against MLE and the control on greedy test BLEU, as the significance table has it."""
    path = results / "tables" / "significance.csv"
    if not path.exists():
        return []
    table = pd.read_csv(path)
    rows = table[(table["task"] == task) & (table["objective"] == "gold_s") & ~table["metric"].isin(TRANSLATION_METRICS)]
    return [
        f"GOLD-s vs {BASELINES.get(row.baseline, row.baseline)} greedy test {row.metric}: {row.delta:+.2f}, "
        f"p (Holm) {row.p_holm:.3f}, minimum detectable difference {row.mde:.2f}; "
        f"significant at 95%: {row.reading}"  # the table's own yes / no, and why
        for row in rows.itertuples()
    ]


def signatures(results: Path, task: str) -> list[tuple[str, bool, str]]:
    scores = load_scores(sorted((results / "scores" / task).glob("*/seed*/*/*/sample*.json")))
    return perplexity_claims(scores, "test", "greedy") + sampling_claims(scores, "valid")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results/demo"), help="the experiment folder")
    parser.add_argument("--task", default="demo")
    args = parser.parse_args(argv)
    checks = run_convergence(args.results, args.task) + signatures(args.results, args.task)
    for name, passed, detail in checks:
        print(f"{'holds' if passed else 'FAILS'}  {name}: {detail}")
    for line in bleu_information(args.results, args.task):
        print(f"info   {line}")
    return 0 if all(passed for _, passed, _ in checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
