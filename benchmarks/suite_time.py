"""Time `.ci/run` on a fresh clone of this commit and write the result into docs/benchmarks.md, the one
place the test suite's wall time and size are quoted from:

    python -m benchmarks.suite_time [--record docs/benchmarks.md]

The clone is made from the committed tree (`git clone` of this repository into a new folder), so what is
measured is what a user who clones gets; its own `.venv` is set up by `.ci/run` (`make setup`). Without
`--record` the row is printed only.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.this_machine import commit, machine

REPO = Path(__file__).resolve().parents[1]
BEGIN = "<!-- suite-time: written by python -m benchmarks.suite_time -->"
END = "<!-- /suite-time -->"


def pytest_summary(output: str) -> tuple[str, float]:
    """("857 passed, 11 skipped", seconds) from pytest's last summary line."""
    match = re.findall(r"=+ (\d+ passed.*?) in ([\d.]+)s", output)
    if not match:
        raise SystemExit("no pytest summary in .ci/run's output:\n" + output[-3000:])
    counts, seconds = match[-1]
    return re.sub(r", \d+ warnings?", "", counts), float(seconds)


def measure() -> dict:
    with tempfile.TemporaryDirectory(prefix="suite-time-") as folder:
        clone = Path(folder) / "clone"
        subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
        start = time.monotonic()
        result = subprocess.run(["bash", ".ci/run"], cwd=clone, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        wall = time.monotonic() - start
    if result.returncode:
        raise SystemExit(f".ci/run failed (exit status {result.returncode}):\n" + result.stdout[-12000:])
    counts, pytest_seconds = pytest_summary(result.stdout)
    return {"commit": commit(), "machine": machine(), "wall": wall, "pytest": pytest_seconds, "counts": counts}


def block(row: dict) -> str:
    return (
        f"{BEGIN}\n| commit | machine | `.ci/run` wall time | of which pytest | tests |\n|---|---|---|---|---|\n"
        f"| {row['commit']} | {row['machine']} | {row['wall'] / 60:.1f} min | {row['pytest'] / 60:.1f} min | {row['counts']} |\n{END}"
    )


def record(page: Path, text: str) -> None:
    content = page.read_text()
    if BEGIN not in content:
        raise SystemExit(f"{page}: no block to write ({BEGIN})")
    start, end = content.index(BEGIN), content.index(END) + len(END)
    page.write_text(content[:start] + text + content[end:])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", type=Path, help="the page whose suite-time block to rewrite (docs/benchmarks.md)")
    arguments = parser.parse_args(argv)
    text = block(measure())
    print(text)
    if arguments.record:
        record(arguments.record, text)


if __name__ == "__main__":
    main(sys.argv[1:])
