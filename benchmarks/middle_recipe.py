"""The middle own-data recipe on the example corpus, timed and read: what docs/guide/your-own-config.md
and docs/benchmarks.md quote of it.

    python -m benchmarks.middle_recipe [--cores 2] [--workdir DIR] [--record]

In a fresh working directory (nothing reused) it writes the example corpus (`gold-textgen example-corpus`:
2,000 training, 200 dev and 200 test pairs), runs configs/local_example.yaml with
configs/local_example_middle.yaml over it, and prints the wall time, each MLE run's updates against its
cap, the test BLEU of greedy decoding per objective (mean and spread over the seeds), the claims'
verdicts and three test examples. `--record` writes the same text into both pages' generated blocks,
with the machine and the commit.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from gold_textgen.analysis.markdown import markdown_table
from gold_textgen.data.example_corpus import write_example_corpus

from .page_blocks import markers, rewrite_block
from .this_machine import commit, machine

REPO = Path(__file__).resolve().parents[1]
CONFIGS = [REPO / "configs" / "local_example.yaml", REPO / "configs" / "local_example_middle.yaml"]
SIZES = {"train": 2000, "valid": 200, "test": 200}
EXPERIMENT, TASK = "local_example_middle", "my_corpus"
PAGES = [REPO / "docs" / "guide" / "your-own-config.md", REPO / "docs" / "benchmarks.md"]
BLOCK = "middle recipe"
COMMAND = "python -m benchmarks.middle_recipe --record"


def run(workdir: Path, cores: str) -> float:
    """Write the corpus and run the recipe in `workdir`; returns the wall time in seconds."""
    write_example_corpus(workdir / "data" / TASK, **SIZES)
    snakemake = shutil.which("snakemake", path=str(Path(sys.executable).parent)) or "snakemake"
    command = [snakemake, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), "--cores", cores]
    start = time.perf_counter()
    result = subprocess.run([*command, "--configfile", *map(str, CONFIGS)], capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"the recipe failed:\n{result.stderr[-3000:]}")
    return time.perf_counter() - start


def bounds(row) -> str:
    return f"bounds [{row.low:.3g}, {row.high:.3g}]"


def summary(workdir: Path, seconds: float, cores: str) -> str:
    """What the pages quote of the run in `workdir`, as markdown."""
    results = workdir / "results" / EXPERIMENT
    training = pd.read_csv(results / "analysis" / TASK / "training_summary.csv")
    mle = training[training["objective"] == "mle"]
    updates = ", ".join(f"seed {row.seed}: {row.global_step} of {row.max_steps}" for row in mle.itertuples())
    converged = "every one converged (stopped by early stopping before its cap)" if mle["converged"].all() else "NOT all converged"
    table = pd.read_csv(results / "tables" / "table1_main.csv")
    scores = table.groupby("objective", sort=False)["bleu"].agg(["mean", "std"])
    quality = ", ".join(f"{name} {row['mean']:.2f} ± {row['std']:.2f}" for name, row in scores.iterrows())
    claims = pd.read_csv(results / "tables" / "claims.csv")
    verdicts = "\n".join(f"- {row.verdict}: {row.name} (estimate {row.estimate:.3g}, {bounds(row)})" for row in claims.itertuples())
    examples = pd.read_csv(results / "tables" / TASK / "examples.csv").head(3)
    columns = [column for column in examples.columns if column != "id"]
    shown = markdown_table(columns, examples[columns].astype(str).to_numpy().tolist())
    return (
        f"From `{COMMAND}` on {machine()}, commit {commit()}: the example corpus ({SIZES['train']:,} training, "
        f"{SIZES['valid']} dev and {SIZES['test']} test pairs), `configs/local_example.yaml` with "
        f"`configs/local_example_middle.yaml`, `--cores {cores}`, nothing reused: **{seconds / 60:.1f} minutes**.\n\n"
        f"- MLE updates ({updates}): {converged}.\n"
        f"- Test BLEU of greedy decoding, mean ± std over the seeds: {quality}.\n\n"
        f"The registered claims its grid covers:\n\n{verdicts}\n\nThree test examples:\n\n{shown}\n"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", default="2")
    parser.add_argument("--workdir", type=Path, help="where it runs (default: a new temporary folder); must be empty")
    parser.add_argument("--record", action="store_true", help=f"write the result into {', '.join(p.name for p in PAGES)}")
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="gold-bench-middle-"))
    if workdir.exists() and any(workdir.iterdir()):
        parser.error(f"{workdir} is not empty: the recipe is timed from nothing")
    seconds = run(workdir, args.cores)
    text = summary(workdir, seconds, args.cores)
    print(text)
    if args.record:
        for page in PAGES:
            rewrite_block(page, *markers(BLOCK, COMMAND), text.rstrip("\n"))


if __name__ == "__main__":
    main()
