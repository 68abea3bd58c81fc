"""The cost of the jobs a Snakemake dry run plans, as `gold-textgen plan --device` prints it: the dry run
itself (with how long it took: every job's start pays that planning once more), and the plan of its jobs
on a measured device with the settings that would save most."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from .device_profile import DeviceProfile
from .dry_run import parse_jobs
from .plan import report
from .savings import savings_lines
from .work import Folders


class DryRunFailed(RuntimeError):
    """Snakemake's dry run ended with an error; the message is what it said."""


def planned_jobs_output(snakemake: list[str], arguments: list[str], everything: bool) -> tuple[str, float]:
    """Snakemake's dry-run output (every job with --forceall when `everything`) and how long it took."""
    start = time.perf_counter()
    command = [*snakemake, "-n", *arguments, *(["--forceall"] if everything else [])]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode:
        raise DryRunFailed(snakemake_failure(result))
    return result.stdout + result.stderr, time.perf_counter() - start


def snakemake_failure(result: subprocess.CompletedProcess) -> str:
    """Why a Snakemake run failed, in its own words: the end of what it wrote (its reasons, such as missing
    input files, go to stdout, its tracebacks to stderr)."""
    said = "\n".join(part.strip() for part in (result.stdout, result.stderr) if part and part.strip())
    return "snakemake failed:\n" + (said[-3000:] if said else f"exit status {result.returncode}, nothing written")


def cost_report(config: dict, profile_path: str, output: str, slots: int, startup: float, root: Path | None = None) -> tuple[str, float]:
    """The plan of a dry run's jobs on a device profile, as text, and its expected wall time (`root`: the
    folder whose past runs give the expected updates; the current one by default). A profile that is not
    one raises ConfigError."""
    profile = DeviceProfile.load(profile_path)
    jobs = [job for job in parse_jobs(output) if job.rule != "all"]
    folders = Folders.of(config, root or Path.cwd())
    text, wall = report(config, profile, jobs, folders, slots, startup)
    shrinking = savings_lines(config, profile if profile.gpu else profile.started_warm(), jobs, folders, slots)
    return (text + "\n\n" + "\n".join(shrinking) if shrinking else text), wall
