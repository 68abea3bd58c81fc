"""How long the default experiment (`make demo`'s workflow) takes, and where the time goes.

    python -m benchmarks.demo [--cores all] [--configfile configs/<name>.yaml] [--workdir DIR] [--threads N]

Runs the whole workflow in a fresh working directory (nothing reused from an earlier run) and prints the
wall time, the number of jobs, and the job seconds spent in training (MLE, reward cache, GOLD), in
evaluation (token NLL, decoding, scoring) and in everything else (data, tokenizer, tables, figures), read
from each job's Snakemake benchmark file. Job seconds add up over jobs that ran side by side, so they can
exceed the wall time.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import pandas as pd

from gold_textgen.workflow.layers import config_layers, experiment_name

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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", default="all")
    parser.add_argument("--configfile", action="append", default=[])
    parser.add_argument("--workdir", type=Path, help="where to run (default: a new temporary folder, removed after)")
    parser.add_argument("--threads", type=int, help="threads of every job that runs a model (default: the resource table's)")
    args = parser.parse_args(argv)
    snakemake = shutil.which("snakemake", path=str(Path(sys.executable).parent)) or "snakemake"
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="gold-bench-demo-"))
    if workdir.exists() and any(workdir.iterdir()):
        parser.error(f"{workdir} is not empty: the benchmark needs a clean working directory")
    command = [snakemake, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), "--cores", args.cores]
    for config in args.configfile:
        command += ["--configfile", str(Path(config).resolve())]
    if args.threads:
        command += ["--set-threads", *(f"{rule}={args.threads}" for rule in MODEL_RULES)]
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if result.returncode:
        sys.exit(f"the workflow failed:\n{result.stderr[-3000:]}")
    stages = job_seconds(workdir, experiment_name(config_layers(REPO / "config.yaml", args.configfile)))
    print(f"wall time        {wall:7.1f} s  ({wall / 60:.1f} min), {count_jobs(result.stderr)} jobs, --cores {args.cores}")
    for stage in ("training", "evaluation", "everything else"):
        print(f"{stage:16s} {stages.get(stage, 0.0):7.1f} job seconds")
    if args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
