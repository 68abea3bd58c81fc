"""Measure how long a workflow step takes to start on this machine, cold (a fresh interpreter, as a SLURM job
starts) and warm (forked from the warm-start server, as a local run's steps start:
gold_textgen/runtime/warm_start.py), for a step that runs a model and one that does not, and write the four
figures into a device profile.

    python -m benchmarks.job_starts --output benchmarks/devices/cpu-epyc-2core.yaml

benchmarks/device_profile.py measures them too when it writes a whole profile; this updates only them.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from datetime import date
from pathlib import Path

from benchmarks.this_machine import commit
from gold_textgen.cost.device_profile import DeviceProfile
from gold_textgen.runtime.files import write_text
from gold_textgen.runtime.warm_start import server_address

# What a step imports before it does anything.
MODEL_JOB_IMPORTS = "import gold_textgen.training.mle, gold_textgen.training.fine_tune, gold_textgen.evaluation.decoding"
CPU_JOB_IMPORTS = "import pandas, matplotlib.figure, gold_textgen.analysis.training_curves, gold_textgen.comparisons.significance"
HANDED_OVER = "from gold_textgen.runtime.warm_start import hand_over\nhand_over()\n"


def start_seconds(imports: str, repeats: int = 3, warm: bool = False) -> float:
    """A step's start: a fresh interpreter running `imports` or, `warm`, the same handed over to the server
    first (the median of a few; the server is started and waited for beforehand)."""
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "step.py"
        script.write_text((HANDED_OVER if warm else "") + imports + "\n")
        if warm:
            wait_for_server(script)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            subprocess.run([sys.executable, str(script)], check=True)
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def wait_for_server(script: Path, timeout: float = 120) -> None:
    """Run the step once (it starts the server and waits for it), then check that the server answers."""
    subprocess.run([sys.executable, str(script)], check=True)
    address, deadline = server_address(), time.monotonic() + timeout
    while address is None or not address.exists():
        if address is None or time.monotonic() > deadline:
            raise SystemExit("the warm-start server did not come up (is GOLD_WARM_START=0 set?)")
        time.sleep(0.2)


def start_figures(repeats: int = 3) -> dict[str, float]:
    """The profile's four start figures (DeviceProfile fields), measured here (each the median of `repeats`)."""
    return {
        "job_start": start_seconds(MODEL_JOB_IMPORTS, repeats),
        "cpu_job": start_seconds(CPU_JOB_IMPORTS, repeats),
        "warm_job_start": start_seconds(MODEL_JOB_IMPORTS, repeats, warm=True),
        "warm_cpu_job": start_seconds(CPU_JOB_IMPORTS, repeats, warm=True),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, required=True, help="the device profile whose start figures to rewrite")
    args = parser.parse_args(argv)
    profile = DeviceProfile.load(args.output)
    figures = start_figures()
    command = "python -m benchmarks.job_starts " + " ".join(argv or sys.argv[1:])
    measured = {**profile.measured, "starts": f"{date.today().isoformat()} at commit {commit()}: {command}"}
    write_text(args.output, replace(profile, measured=measured, **figures).to_yaml())
    print(", ".join(f"{name} {seconds:.2f} s" for name, seconds in figures.items()), f"-> {args.output}")


if __name__ == "__main__":
    main()
