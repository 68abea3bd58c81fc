"""How long the default experiment (`make demo`'s workflow) takes, and where the time goes.

    python -m benchmarks.demo [--cores all] [--configfile configs/<name>.yaml] [--workdir DIR] [--threads N]
        [--device benchmarks/devices/<profile>.yaml]

Runs the whole workflow in a fresh working directory (nothing reused from an earlier run) and prints the
wall time, the number of jobs, and the job seconds spent in training (MLE, reward cache, GOLD), in
evaluation (token NLL, decoding, scoring) and in everything else (data, tokenizer, tables, figures), read
from each job's Snakemake benchmark file. Job seconds add up over jobs that ran side by side, so they can
exceed the wall time. With --device it also prints what `gold-textgen plan` expects on that device profile,
beside the measured wall time: before the run (the empty folder: the updates of cost.expected_updates, what a
fresh clone's plan says) and after it (the updates this run made, which tests the rates, the work counts and
the schedule alone).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import pandas as pd

from gold_textgen.config.layers import config_layers, experiment_name, merged_config
from gold_textgen.config.schema import validate_config
from gold_textgen.cost.planned_cost import cost_report, planned_jobs_output

REPO = Path(__file__).resolve().parents[1]
STAGES = {"train_mle": "training", "cache_rewards": "training", "fine_tune": "training", "evaluate": "evaluation"}


def job_seconds(workdir: Path, experiment: str = "demo") -> dict[str, float]:
    """Job seconds per stage, from logs/<experiment>/benchmarks/{rule}/...tsv (jobs without a benchmark file count as 0)."""
    totals: dict[str, float] = defaultdict(float)
    benchmarks = workdir / "logs" / experiment / "benchmarks"
    for path in benchmarks.rglob("*.tsv"):
        rule = path.relative_to(benchmarks).parts[0]
        totals[STAGES.get(rule, "everything else")] += float(pd.read_csv(path, sep="\t")["s"].sum())
    return totals


# The rules that run a model (training, reward cache, evaluation per split).
MODEL_RULES = ("train_mle", "fine_tune", "cache_rewards", "evaluate_train", "evaluate_valid", "evaluate_test")


def count_jobs(log_text: str) -> int:
    return sum(1 for line in log_text.splitlines() if line.startswith(("rule ", "localrule ")))


def planned_wall(command: list[str], workdir: Path, configfiles: list[str], device: Path, cores: str) -> float:
    """The plan's expected wall time for every job of the experiment (with the updates of the runs in
    `workdir`, where there are any), its dry run's duration standing for the workflow's start."""
    output, startup = planned_jobs_output(command[:1], command[1:], everything=True)
    config = validate_config(merged_config(REPO / "config.yaml", configfiles))
    slots = len(os.sched_getaffinity(0)) if cores == "all" else int(cores)
    text, wall = cost_report(config, str(device), output, slots, startup, workdir)
    print(text)
    return wall


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", default="all")
    parser.add_argument("--configfile", action="append", default=[])
    parser.add_argument("--workdir", type=Path, help="where to run (default: a new temporary folder, removed after)")
    parser.add_argument("--threads", type=int, help="threads of every job that runs a model (default: the resource table's)")
    parser.add_argument("--device", type=Path, help="a device profile: print the plan's expected wall time beside the measured one")
    args = parser.parse_args(argv)
    snakemake = shutil.which("snakemake", path=str(Path(sys.executable).parent)) or "snakemake"
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="gold-bench-demo-"))
    if workdir.exists() and any(workdir.iterdir()):
        parser.error(f"{workdir} is not empty: the benchmark needs a clean working directory")
    command = [snakemake, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), "--cores", args.cores]
    if args.configfile:  # one flag for all: Snakemake keeps only the last of repeated --configfile flags
        command += ["--configfile", *(str(Path(config).resolve()) for config in args.configfile)]
    if args.threads:
        command += ["--set-threads", *(f"{rule}={args.threads}" for rule in MODEL_RULES)]
    before = planned_wall(command, workdir, args.configfile, args.device, args.cores) if args.device else None
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if result.returncode:
        sys.exit(f"the workflow failed:\n{result.stderr[-3000:]}")
    stages = job_seconds(workdir, experiment_name(config_layers(REPO / "config.yaml", args.configfile)))
    print(f"wall time        {wall:7.1f} s  ({wall / 60:.1f} min), {count_jobs(result.stderr)} jobs, --cores {args.cores}")
    for stage in ("training", "evaluation", "everything else"):
        print(f"{stage:16s} {stages.get(stage, 0.0):7.1f} job seconds")
    if args.device:
        planned = planned_wall(command, workdir, args.configfile, args.device, args.cores)
        for when, seconds in (("before the run", before), ("with its updates", planned)):
            print(f"planned {when:16s} {seconds:7.1f} s  ({seconds / 60:.1f} min) on {args.device}: {seconds / wall:.2f} x the measured")
    if args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
