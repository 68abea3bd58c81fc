"""The jobs Snakemake would run, read from its dry-run output (`snakemake -n`): each job's rule,
wildcards, threads and files, and which jobs each one waits for (an input another job writes); and the
jobs per rule of its summary table. The one reader of that output for the CLI, the benchmarks and the tests."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

JOB_HEADER = re.compile(r"^(?:local)?rule (\w+):$")
FIELD = re.compile(r"^\s+(\w+): (.*)$")
JOB_COUNT = re.compile(r"^(\w+)\s+(\d+)$")


def job_counts(output: str) -> dict[str, int]:
    """Jobs per rule, from the "Job stats" table that ends a dry run's output (`snakemake -n`, or the table
    alone with `-n --quiet rules`), without its total."""
    counts = {}
    for line in output.split("Job stats:", 1)[-1].splitlines():
        if line.strip().startswith("total"):
            break
        if match := JOB_COUNT.match(line.strip()):
            counts[match.group(1)] = int(match.group(2))
    return counts


@dataclass
class PlannedJob:
    jobid: int
    rule: str
    wildcards: dict[str, str] = field(default_factory=dict)
    threads: int = 1
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    after: set[int] = field(default_factory=set)  # jobids this job waits for
    runtime: int | None = None  # the job's runtime request (minutes; SLURM's time limit)
    priority: int = 0  # the rule's `priority:` (Snakemake starts ready jobs of higher priority first)


def parse_jobs(output: str) -> list[PlannedJob]:
    """The jobs of a dry run's output, with their dependencies."""
    jobs: list[PlannedJob] = []
    current: dict | None = None
    for line in output.splitlines():
        if match := JOB_HEADER.match(line.strip()):
            current = {"rule": match.group(1)}
            jobs.append(current)
        elif current is not None and (match := FIELD.match(line)):
            current[match.group(1)] = match.group(2)
        elif current is not None and not line.startswith(" "):
            current = None
    planned = [_job(fields) for fields in jobs if "jobid" in fields]
    writer = {path: job.jobid for job in planned for path in job.outputs}
    for job in planned:
        job.after = {writer[path] for path in job.inputs if path in writer and writer[path] != job.jobid}
    return planned


def _job(fields: dict) -> PlannedJob:
    wildcards = dict(pair.split("=", 1) for pair in _items(fields.get("wildcards", "")))
    resources = dict(pair.split("=", 1) for pair in _items(fields.get("resources", "")) if "=" in pair)
    return PlannedJob(
        jobid=int(fields["jobid"]),
        rule=fields["rule"],
        wildcards=wildcards,
        threads=int(fields.get("threads", 1)),
        inputs=_items(fields.get("input", "")),
        outputs=_items(fields.get("output", "")),
        runtime=int(resources["runtime"]) if resources.get("runtime", "").isdigit() else None,
        priority=int(fields.get("priority", 0)),
    )


def _items(text: str) -> list[str]:
    return [item.strip() for item in text.split(", ") if item.strip()]
