"""Time `.ci/run` on a fresh clone of this commit and write the result into docs/benchmarks.md, the one
place the test suite's wall time and size are quoted from:

    python -m benchmarks.suite_time [--against COMMIT] [--record docs/benchmarks.md]

The clone is made from the committed tree (`git clone` of this repository into a new folder), so what is
measured is what a user who clones gets; its own `.venv` is set up by `.ci/run` (`make setup`). Without
`--record` the rows are printed only. `--against` measures an earlier commit the same way right after, on
the same machine, and adds its row and the ratio: a virtual machine's speed can change by half or more from one
day to another, so a time is compared with another only when both were measured in one run.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from benchmarks.page_blocks import markers, rewrite_block
from benchmarks.this_machine import commit, machine

REPO = Path(__file__).resolve().parents[1]
BEGIN, END = markers("suite-time", "python -m benchmarks.suite_time")


def pytest_summary(output: str) -> tuple[str, float]:
    """("857 passed, 11 skipped", seconds) from pytest's last summary line."""
    match = re.findall(r"=+ (\d+ passed.*?) in ([\d.]+)s", output)
    if not match:
        raise SystemExit("no pytest summary in .ci/run's output:\n" + output[-3000:])
    counts, seconds = match[-1]
    return re.sub(r", \d+ warnings?", "", counts), float(seconds)


def busy_fraction(before, after) -> float:
    """The share of the machine's CPU time between two readings of psutil.cpu_times() that was not idle: near
    1, the run was bound by the work on the cores; well below, by waiting (for SLURM's polls, say)."""
    spent = {field: getattr(after, field) - getattr(before, field) for field in after._fields}
    # Linux counts a virtual machine's guest time inside user and nice already (psutil does not add it twice either).
    total = sum(spent.values()) - spent.get("guest", 0.0) - spent.get("guest_nice", 0.0)
    return 1 - (spent["idle"] + spent.get("iowait", 0.0)) / total


def measure(revision: str = "HEAD") -> dict:
    """`.ci/run` on a fresh clone of `revision`: its short commit id, the machine, wall and pytest seconds,
    pytest's counts, and how busy the machine's cores were over the whole run (setup included)."""
    with tempfile.TemporaryDirectory(prefix="suite-time-") as folder:
        clone = Path(folder) / "clone"
        subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", commit(revision)], check=True)
        start, cpu = time.monotonic(), psutil.cpu_times()
        result = subprocess.run(["bash", ".ci/run"], cwd=clone, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        wall, busy = time.monotonic() - start, busy_fraction(cpu, psutil.cpu_times())
    if result.returncode:
        raise SystemExit(f".ci/run failed (exit status {result.returncode}):\n" + result.stdout[-12000:])
    counts, pytest_seconds = pytest_summary(result.stdout)
    return {"commit": commit(revision), "machine": machine(), "wall": wall, "pytest": pytest_seconds, "counts": counts, "busy": busy}


def table_row(row: dict) -> str:
    return (
        f"| {row['commit']} | {row['machine']} | {row['wall'] / 60:.1f} min | {row['pytest'] / 60:.1f} min | {row['busy']:.0%} "
        f"| {row['counts']} |"
    )


def block(rows: list[dict]) -> str:
    """The rows as a table; with an earlier commit's row, each time's ratio to it."""
    lines = ["| commit | machine | `.ci/run` wall time | of which pytest | cores busy | tests |", "|---|---|---|---|---|---|"]
    lines += [table_row(row) for row in rows]
    if len(rows) == 2:
        this, earlier = rows
        lines += [
            "",
            f"Measured one after the other: {this['commit']} takes {this['wall'] / earlier['wall']:.2f} times "
            f"{earlier['commit']}'s wall time, {this['pytest'] / earlier['pytest']:.2f} times its pytest time.",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", type=Path, help="the page whose suite-time block to rewrite (docs/benchmarks.md)")
    parser.add_argument("--against", metavar="COMMIT", help="an earlier commit to measure right after, for the ratio")
    arguments = parser.parse_args(argv)
    rows = [measure()]
    if arguments.against:
        rows.append(measure(arguments.against))
    text = block(rows)
    print(text)
    if arguments.record:
        rewrite_block(arguments.record, BEGIN, END, text)


if __name__ == "__main__":
    main(sys.argv[1:])
