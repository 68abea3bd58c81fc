"""The demo's claims, checked on a finished run's files (`make demo` prints this after the tables).

    python -m gold_textgen.analysis.demo_signatures [--results results] [--task demo]

* MLE converged before its step cap: every MLE run ended by early stopping, or its last two dev
  evaluations differ by less than 0.5 (from each model's log_history.json and provenance.json);
* GOLD-s's greedy test BLEU (mean over seeds) is at least MLE's;
* every GOLD model's test perplexity is above its seed's MLE model's (GOLD gives up on unlikely tokens);
* MLE's BLEU drop from greedy decoding to top-k 20 sampling (dev) is at least 3x GOLD-s's.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd
import yaml


def mle_convergence(results: Path, task: str) -> list[tuple[str, bool, str]]:
    checks = []
    for model in sorted((results / "models" / task / "mle").glob("seed*")):
        provenance = json.loads((model / "provenance.json").read_text())
        cap = yaml.safe_load((model / "resolved_config.yaml").read_text())["training"]["max_steps"]
        key = f"eval_{provenance['metric']}"
        dev = [entry[key] for entry in json.loads((model / "log_history.json").read_text()) if key in entry]
        stopped_early = provenance["global_step"] < cap
        settled = len(dev) >= 2 and abs(dev[-1] - dev[-2]) < 0.5
        detail = f"stopped at update {provenance['global_step']} of {cap}; last dev {provenance['metric']}: "
        detail += ", ".join(f"{value:.2f}" for value in dev[-3:])
        checks.append((f"MLE {model.name} converged before its cap", stopped_early or settled, detail))
    return checks


def signatures(results: Path, task: str) -> list[tuple[str, bool, str]]:
    table1 = pd.read_csv(results / "tables" / "table1_main.csv")
    table1 = table1[(table1["task"] == task) & (table1["decoder"] == "greedy")]
    mean = table1[table1["seed"] == "mean"].set_index("objective")
    checks = [
        (
            "GOLD-s greedy BLEU >= MLE's (mean over seeds)",
            mean.loc["gold_s", "bleu"] >= mean.loc["mle", "bleu"],
            f"GOLD-s {mean.loc['gold_s', 'bleu']:.2f}, MLE {mean.loc['mle', 'bleu']:.2f}",
        )
    ]
    seeds = table1[table1["seed"] != "mean"]
    for seed, rows in seeds.groupby("seed"):
        by_objective = rows.set_index("objective")["perplexity"]
        gold = by_objective.drop("mle")
        checks.append(
            (
                f"seed {seed}: every GOLD perplexity above MLE's",
                bool((gold > by_objective["mle"]).all()),
                ", ".join(f"{name} {value:.2f}" for name, value in by_objective.items()),
            )
        )
    table2 = pd.read_csv(results / "tables" / "table2_decoding.csv")
    drops = table2[(table2["task"] == task) & (table2["decoder"] == "topk20")].set_index("objective")["drop_from_greedy"]
    checks.append(
        (
            "MLE's greedy -> top-k 20 drop >= 3x GOLD-s's",
            drops["mle"] >= 3 * drops["gold_s"],
            f"MLE {drops['mle']:.2f}, GOLD-s {drops['gold_s']:.2f} ({drops['mle'] / drops['gold_s']:.1f}x)",
        )
    )
    return checks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--task", default="demo")
    args = parser.parse_args(argv)
    checks = mle_convergence(args.results, args.task) + signatures(args.results, args.task)
    for name, passed, detail in checks:
        print(f"{'holds' if passed else 'FAILS'}  {name}: {detail}")
    return 0 if all(passed for _, passed, _ in checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
