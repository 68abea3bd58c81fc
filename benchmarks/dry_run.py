"""How long `snakemake -n` takes to plan an experiment, beside Snakemake's bare start-up on the same machine.

    python -m benchmarks.dry_run --configfile configs/paper.yaml --rounds 5

Rounds alternate between the two commands; medians are printed. The start-up includes loading the
executor plugins: on a machine with the SLURM client installed but no controller answering, the SLURM
plugin's probe of the cluster adds several seconds to every Snakemake start.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def seconds(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configfile", default="configs/paper.yaml")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    snakemake = shutil.which("snakemake", path=str(Path(sys.executable).parent)) or "snakemake"
    plan = [snakemake, "-n", "--quiet", "--cores", "1", "--configfile", args.configfile]
    startup = [snakemake, "--version"]
    seconds(plan)  # warm the file-system cache
    timings: dict[str, list[float]] = {"dry run": [], "start-up only": []}
    for _ in range(args.rounds):
        timings["dry run"].append(seconds(plan))
        timings["start-up only"].append(seconds(startup))
    for name, values in timings.items():
        print(f"{name:14s} median {statistics.median(values):5.2f} s  (runs: {', '.join(f'{v:.2f}' for v in values)})")


if __name__ == "__main__":
    main()
