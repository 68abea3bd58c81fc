"""What an experiment's run shows about the paper's claims (`make demo` prints this after the tables;
`gold-textgen signatures` for any experiment).

    python -m gold_textgen.comparisons.demo_signatures [--results results/demo] [--task demo]

First the checks every claim rests on, facts of each run: every MLE run converged (its step cap did not
stop a rising dev metric, and its dev metric rose at all), and every fine-tuning run kept a model its
training made (not the one of its first evaluation). Then the verdict of every registered claim of the
paper (claims/paper_claims.py) that the experiment's grid covers, as the workflow's `claims` rule wrote
them (results/<experiment>/tables/claims.csv; comparisons/claim_verdicts.py): supported, contradicted or inconclusive,
each with its bounds at the level that decided it, its Holm-adjusted p, and its power against the paper's
effect with the seeds that would reach 80%.

The exit status is 1 when a run check fails, a claim is contradicted, or a claim the grid covers has no
verdict in the table; inconclusive claims are reported with their power and do not fail the run: the line
says where the paper's effect stands against the bounds, either within them (a design too small to tell,
and how many seeds would do) or above the upper bound (this run rules the paper's effect out).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from ..bookkeeping.convergence import run_summary
from ..bookkeeping.experiment_index import CLAIMS_TABLE, read_record
from ..claims.paper_claims import experiment_claims
from ..config.layers import merged_config
from ..config.schema import validate_config
from ..runtime.errors import ConfigError
from ..runtime.files import content_digest
from .claim_verdicts import CONTRADICTED, Verdict, disagreement, verdicts_of


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


class UnreadableClaims(Exception):
    """The claims table is not the one the experiment's run wrote, or says what no test can say."""


def verdicts(results: Path, task: str) -> list[Verdict]:
    """The task's verdicts as the claims rule wrote them: the table must be the one the experiment's record
    names (its digest: not another experiment's table copied in, not a table edited by hand), and each
    verdict must agree with its bounds (claims.disagreement)."""
    table_path = results / CLAIMS_TABLE
    record = read_record(results)
    if record is not None and "claims_digest" in record and content_digest(table_path) != record["claims_digest"]:
        raise UnreadableClaims(
            f"{table_path} is not the claims table the run of {results} wrote (its digest differs from experiment.json's): "
            f"it was edited or copied in; remake it with `snakemake --forcerun claims {table_path}` and that experiment's config"
        )
    table = pd.read_csv(table_path)
    found = verdicts_of(table[table["task"] == task])
    for verdict in found:
        problem = disagreement(verdict)
        if problem:
            raise UnreadableClaims(f"{table_path}: {verdict.name} {problem}; no test writes that: remake the table")
    return found


def expected_claims(results: Path, task: str) -> list[str] | None:
    """The names of the claim tests the experiment's grid covers for `task`: from the config files its record
    names (experiment.json), or where those are gone, from the settings the record holds; None without
    either."""
    record = read_record(results) or {}
    files = [Path(path) for path in record.get("config_files", [])]
    if files and all(path.is_file() for path in files):
        config = validate_config(merged_config(files[0], files[1:]))
    elif record.get("settings"):
        config = validate_config(json.loads(json.dumps(record["settings"])))
    else:
        return None
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
    try:
        return report(args.results, args.task)
    except ConfigError as error:  # a record or table that is not what the workflow wrote, named in one line
        print(f"error: {error}", file=sys.stderr)
        return 2


def report(results: Path, task: str) -> int:
    """Print the run checks and the verdicts of `task` in the experiment folder `results`; the exit status."""
    checks = run_checks(results, task)
    for name, passed, detail in checks:
        print(f"{'holds' if passed else 'FAILS':12s} {name}: {detail}")
    try:
        found = verdicts(results, task)
    except UnreadableClaims as error:
        print(f"Not shown by this run: {error}")
        return 1
    for verdict in found:
        print(verdict.line())
    expected = expected_claims(results, task) if (results / "experiment.json").is_file() else None
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
