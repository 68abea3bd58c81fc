"""Do the demo's claims hold on any machine? Runs an experiment afresh under variations that change float
paths, and prints one verdict table (analysis/claims.py: supported / contradicted / inconclusive).

    python -m benchmarks.claims [--configfile configs/<name>.yaml] [--task demo] [--claims demo] [--cores 2]
        [--variations one_thread,two_threads,other_seeds] [--workdir DIR] [--output FILE]

    python -m benchmarks.claims --configfile configs/nqg_real.yaml --task nqg_real --claims standard

Variations: `one_thread` (every model job on 1 thread, the resource table's CPU default), `two_threads`
(every model job on 2), `other_seeds` (1 thread, the experiment's seeds shifted by 100). Each runs the
whole workflow in its own folder, nothing reused. The claims are those `gold-textgen signatures` tests
(analysis/demo_signatures.py), decided at Holm-adjusted levels; beside them the power each claim's test
would have with 2, 3 and 5 seeds at Holm's strictest level, were the per-seed contrasts' mean and spread
those pooled over the variations (how many seeds the experiment needs). The markdown table names the
machine and commit it ran on.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from gold_textgen.analysis.claims import power
from gold_textgen.analysis.demo_signatures import ALPHA, CLAIM_SETS, run_checks, signatures
from gold_textgen.workflow.layers import config_layers, experiment_name, merged_config
from gold_textgen.workflow.schema import validate_config

from .demo import MODEL_RULES

REPO = Path(__file__).resolve().parents[1]
VARIATIONS = {"one_thread": (1, 0), "two_threads": (2, 0), "other_seeds": (1, 100)}  # threads per job, seed shift
POWER_SEEDS = (2, 3, 5)


def run_variation(name: str, workdir: Path, configfiles: list[str], cores: str) -> Path:
    """Run the experiment in `workdir` under variation `name`; returns its results folder."""
    threads, shift = VARIATIONS[name]
    files = [str(Path(path).resolve()) for path in configfiles]
    experiment = validate_config(merged_config(REPO / "config.yaml", files))["experiment"]
    if shift:  # the same experiment (its name kept) on other seeds
        overlay = workdir / "other_seeds.yaml"
        workdir.mkdir(parents=True, exist_ok=True)
        seeds = [seed + shift for seed in experiment["seeds"]]
        overlay.write_text(yaml.safe_dump({"experiment": {"name": experiment["name"], "seeds": seeds}}))
        files.append(str(overlay))
    snakemake = shutil.which("snakemake", path=str(Path(sys.executable).parent)) or "snakemake"
    command = [snakemake, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), "--cores", cores]
    command += ["--set-threads", *(f"{rule}={threads}" for rule in MODEL_RULES)]
    command += ["--configfile", *files] if files else []
    print(f"{name}: {' '.join(command)}", file=sys.stderr, flush=True)
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"{name}: the workflow failed:\n{result.stderr[-3000:]}")
    return workdir / "results" / experiment_name(config_layers(REPO / "config.yaml", files))


def machine() -> str:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if "model name" in line), "")
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    return f"{model or platform.processor()}, {len(os.sched_getaffinity(0))} cores; commit {commit or 'unknown'}"


def verdict_table(results: dict[str, Path], task: str, claims: str = "demo") -> str:
    """Markdown: one row per claim, one column per variation, then the checks that failed per variation."""
    verdicts = {name: signatures(folder, task, ALPHA, claims) for name, folder in results.items()}
    failed = {name: [check for check, passed, _ in run_checks(folder, task) if not passed] for name, folder in results.items()}
    claims = [verdict.claim for verdict in next(iter(verdicts.values()))]
    family = len(claims)
    header = ["claim", *results, *(f"power, {seeds} seeds" for seeds in POWER_SEEDS)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for index, claim in enumerate(claims):
        cells = [f"{v.verdict} {v.estimate:.3g} [{v.low:.3g}, {v.high:.3g}]" for v in (verdicts[name][index] for name in results)]
        pooled = [value for name in results for value in verdicts[name][index].contrasts]
        powers = [f"{power(pooled, seeds, ALPHA / family):.2f}" for seeds in POWER_SEEDS]
        lines.append("| " + " | ".join([claim, *cells, *powers]) + " |")
    checks = "; ".join(f"{name}: {', '.join(found)}" for name, found in failed.items() if found) or "none"
    return "\n".join(lines) + f"\n\nChecks that failed (runs that did not converge or kept their first model): {checks}.\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configfile", action="append", default=[])
    parser.add_argument("--task", default="demo")
    parser.add_argument("--claims", choices=sorted(CLAIM_SETS), default="demo", help="the claim set (standard: nqg_real's)")
    parser.add_argument("--cores", default="2")
    parser.add_argument("--variations", default=",".join(VARIATIONS), help=f"comma-separated, of {', '.join(VARIATIONS)}")
    parser.add_argument("--workdir", type=Path, help="where the variations run, one folder each (default: a new temporary folder)")
    parser.add_argument("--output", type=Path, help="also write the markdown table here")
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.variations.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in VARIATIONS]
    if unknown:
        parser.error(f"unknown variation {unknown[0]!r} (choose from {', '.join(VARIATIONS)})")
    base = args.workdir or Path(tempfile.mkdtemp(prefix="gold-bench-claims-"))
    taken = [base / name for name in chosen if (base / name).exists() and any((base / name).iterdir())]
    if taken:
        parser.error(f"{taken[0]} is not empty: each variation needs a clean folder")
    results = {name: run_variation(name, base / name, args.configfile, args.cores) for name in chosen}
    heading = f"Claims under {', '.join(chosen)} (one-sided, Holm at {ALPHA:g}); {machine()}.\n\n"
    text = heading + verdict_table(results, args.task, args.claims)
    print(text)
    if args.output:
        args.output.write_text(text)


if __name__ == "__main__":
    main()
