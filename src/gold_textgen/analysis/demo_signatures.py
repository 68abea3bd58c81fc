"""The demo's claims, tested on a finished run's files (`make demo` prints this after the tables).

    python -m gold_textgen.analysis.demo_signatures [--results results/demo] [--task demo] [--alpha 0.05]

First the checks a claim rests on, facts of each run: every MLE run converged (its step cap did not stop
a rising dev metric, and its dev metric rose at all), and every fine-tuning run kept a model its training
made (not the one of its first evaluation). Then the claims, each a one-sided test over training seeds
(analysis/claims.py), decided together at Holm-adjusted levels:

* every GOLD model's test perplexity is above MLE's and above the control's (ratio > 1: GOLD gives up on
  tokens it finds unlikely);
* the dev BLEU that top-k 20 sampling loses against greedy decoding is at least 3x smaller for GOLD-s
  than for MLE and for the control (a ratio of mean drops, Fieller).

Each is supported, contradicted or inconclusive. Greedy test BLEU is not a claim: on this task GOLD-s and
MLE differ by less than the seed spread, and the significance table (results/demo/tables/significance.md)
says so. It is printed for information. The exit status is 0 when every check holds and every claim is
supported.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from ..workflow.convergence import run_summary
from .claims import SUPPORTED, Verdict, difference_claim, holm_verdicts, ratio_claim, ratio_of_means_claim
from .significance import TRANSLATION_METRICS
from .tables import average_sample_runs, load_scores

GOLD = ("gold_delta", "gold_p", "gold_s")
BASELINES = {"mle": "MLE", "mle_continued": "the control"}
ALPHA = 0.05
DROP_RATIO = 3.0


def run_checks(results: Path, task: str) -> list[tuple[str, bool, str]]:
    """One check per trained model: MLE converged; a fine-tuning run kept a model its training made."""
    checks = []
    for model in sorted((results / "models" / task).glob("*/seed*")):
        summary = run_summary(model)
        detail = (
            f"{summary['global_step']} of {summary['max_steps']} updates; kept the model of update {summary['selected_step']}, "
            f"last dev {summary['metric']} evaluation at {summary['last_eval_step']}"
            + ("; still rising there" if summary["still_improving"] else "")
        )
        if model.parent.name == "mle":
            checks.append((f"mle {model.name} converged before its cap", bool(summary["converged"]), detail))
        else:
            checks.append((f"{model.parent.name} {model.name} kept a model its training made", not summary["kept_first"], detail))
    return checks


def _per_seed(scores: pd.DataFrame, split: str, decoder: str, metric: str) -> pd.DataFrame:
    """objective x seed: `metric` of the split and decoder, sampling runs averaged."""
    chosen = scores[(scores["split"] == split) & (scores["decoder"] == decoder)]
    runs = average_sample_runs(chosen, [metric])
    return runs.pivot_table(index="seed", columns="objective", values=metric)


def perplexity_claims(scores: pd.DataFrame, split: str, decoder: str, alpha: float) -> list[Verdict]:
    table = _per_seed(scores, split, decoder, "perplexity")
    return [
        ratio_claim(f"{gold} test perplexity above {name}'s (ratio > 1)", table[gold], table[baseline], 1.0, alpha)
        for gold in GOLD
        if gold in table.columns
        for baseline, name in BASELINES.items()
        if baseline in table.columns
    ]


def sampling_claims(scores: pd.DataFrame, split: str, alpha: float) -> list[Verdict]:
    drop = _per_seed(scores, split, "greedy", "bleu") - _per_seed(scores, split, "topk20", "bleu")
    return [
        ratio_of_means_claim(
            f"{name}'s greedy -> top-k 20 dev BLEU drop at least {DROP_RATIO:g}x GOLD-s's",
            drop[baseline],
            drop["gold_s"],
            DROP_RATIO,
            alpha,
        )
        for baseline, name in BASELINES.items()
        if baseline in drop.columns and "gold_s" in drop.columns
    ]


def standard_claims(scores: pd.DataFrame, alpha: float) -> list[Verdict]:
    """The real-language claims (configs/nqg_real.yaml, docs/results/standard-models.md): GOLD-s's greedy
    test BLEU above the control's, and the control's greedy -> top-k 20 dev BLEU drop above GOLD-s's."""
    test = _per_seed(scores, "test", "greedy", "bleu")
    drop = _per_seed(scores, "valid", "greedy", "bleu") - _per_seed(scores, "valid", "topk20", "bleu")
    return [
        difference_claim("GOLD-s greedy test BLEU above the control's", test["gold_s"], test["mle_continued"], 0.0, alpha),
        difference_claim(
            "the control's greedy -> top-k 20 dev BLEU drop above GOLD-s's", drop["mle_continued"], drop["gold_s"], 0.0, alpha
        ),
    ]


def demo_claims(scores: pd.DataFrame, alpha: float) -> list[Verdict]:
    return perplexity_claims(scores, "test", "greedy", alpha) + sampling_claims(scores, "valid", alpha)


# The claim sets an experiment's docs make, by name (--claims).
CLAIM_SETS = {"demo": demo_claims, "standard": standard_claims}


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


def signatures(results: Path, task: str, alpha: float = ALPHA, claims: str = "demo") -> list[Verdict]:
    """The verdicts of claim set `claims` on an experiment's score files, decided together (Holm)."""
    scores = load_scores(sorted((results / "scores" / task).glob("*/seed*/*/*/sample*.json")))
    return holm_verdicts(CLAIM_SETS[claims](scores, alpha), alpha)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results/demo"), help="the experiment folder")
    parser.add_argument("--task", default="demo")
    parser.add_argument("--alpha", type=float, default=ALPHA, help="the claims' family-wise level (Holm)")
    parser.add_argument("--claims", choices=sorted(CLAIM_SETS), default="demo", help="the claim set to test (standard: nqg_real's)")
    args = parser.parse_args(argv)
    if not (args.results / "models" / args.task).is_dir():
        parser.error(f"no trained models of task {args.task} under {args.results}/models/: run the experiment first (make demo)")
    checks = run_checks(args.results, args.task)
    for name, passed, detail in checks:
        print(f"{'holds' if passed else 'FAILS':12s} {name}: {detail}")
    verdicts = signatures(args.results, args.task, args.alpha, args.claims)
    for verdict in verdicts:
        print(verdict.line())
    for line in bleu_information(args.results, args.task):
        print(f"{'info':12s} {line}")
    failed = [name for name, passed, _ in checks if not passed]
    unsupported = [f"{verdict.claim} ({verdict.verdict})" for verdict in verdicts if verdict.verdict != SUPPORTED]
    if failed or unsupported:
        print("Not shown by this run: " + "; ".join(failed + unsupported))
        return 1
    print(f"Every check holds and every claim is supported (one-sided, Holm at {args.alpha:g}, {verdicts[0].seeds} seeds).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
