"""What an experiment's run shows about the paper's claims (`make demo` prints this after the tables;
`gold-textgen signatures` for any experiment).

    python -m gold_textgen.analysis.demo_signatures [--results results/demo] [--task demo]

First the checks every claim rests on, facts of each run: every MLE run converged (its step cap did not
stop a rising dev metric, and its dev metric rose at all), and every fine-tuning run kept a model its
training made (not the one of its first evaluation). Then the verdict of every registered claim of the
paper (config/paper_claims.py) that the experiment's grid covers, as the workflow's `claims` rule wrote
them (results/<experiment>/tables/claims.csv; analysis/claims.py): supported, contradicted or inconclusive,
each with its bounds at the level that decided it, its Holm-adjusted p, and its power against the paper's
effect with the seeds that would reach 80%.

The exit status is 1 when a run check fails, a claim is contradicted, or a claim the grid covers has no
verdict in the table; inconclusive claims are reported with their power and do not fail the run (a design
too small to show an effect is not a failure of the software, and the line says how many seeds would do).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from ..config.layers import merged_config
from ..config.paper_claims import experiment_claims
from ..config.schema import validate_config
from ..workflow.convergence import run_summary
from .claims import CONTRADICTED, Verdict, verdicts_of


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


def verdicts(results: Path, task: str) -> list[Verdict]:
    """The task's verdicts as the claims rule wrote them."""
    table = pd.read_csv(results / "tables" / "claims.csv")
    return verdicts_of(table[table["task"] == task])


def expected_claims(results: Path, task: str) -> list[str] | None:
    """The names of the claim tests the experiment's grid covers for `task`, from the config files its record
    names (experiment.json); None when those files are no longer where the record says."""
    record = json.loads((results / "experiment.json").read_text())
    files = [Path(path) for path in record.get("config_files", [])]
    if not files or not all(path.is_file() for path in files):
        return None
    config = validate_config(merged_config(files[0], files[1:]))
    return [test.name for test in experiment_claims(config) if test.task == task]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results/demo"), help="the experiment folder")
    parser.add_argument("--task", default="demo")
    args = parser.parse_args(argv)
    if not (args.results / "models" / args.task).is_dir():
        parser.error(f"no trained models of task {args.task} under {args.results}/models/: run the experiment first (make demo)")
    if not (args.results / "tables" / "claims.csv").is_file():
        table = args.results / "tables" / "claims.csv"
        parser.error(f"no {table}: run the experiment's claims rule first (snakemake {table})")
    checks = run_checks(args.results, args.task)
    for name, passed, detail in checks:
        print(f"{'holds' if passed else 'FAILS':12s} {name}: {detail}")
    found = verdicts(args.results, args.task)
    for verdict in found:
        print(verdict.line())
    expected = expected_claims(args.results, args.task) if (args.results / "experiment.json").is_file() else None
    missing = [name for name in expected or [] if name not in {verdict.name for verdict in found}]
    failed = [name for name, passed, _ in checks if not passed]
    contradicted = [verdict.name for verdict in found if verdict.verdict == CONTRADICTED]
    problems = failed + [f"{name} (contradicted)" for name in contradicted] + [f"{name} (no verdict in the table)" for name in missing]
    counts = pd.Series([verdict.verdict for verdict in found]).value_counts().to_dict()
    tally = ", ".join(f"{counts[key]} {key}" for key in ("supported", "contradicted", "inconclusive") if key in counts)
    if problems:
        print("Not shown by this run: " + "; ".join(problems))
        return 1
    print(f"Every run check holds; of the {len(found)} registered claims this grid covers: {tally or 'none'}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
