"""The cost plan of an experiment on a device: each job's expected and upper-bound time (estimates.py),
summed per rule and per table (a job that several tables need counts in each), GPU-hours and CPU-hours,
and the wall time on a given number of cores or GPUs (the jobs list-scheduled in dependency order,
longest first, as Snakemake runs them)."""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from ..bookkeeping.resources import stage_request
from ..config.views import task_config
from .device_profile import DeviceProfile
from .dry_run import PlannedJob
from .estimates import Estimate, job_estimate, runs_a_model, stage_of
from .work import CAP, FIXED_BUDGET, PAST_RUN, RECORDED, TRAINING_RULES, Folders, expected_updates

# The rules whose outputs are the experiment's tables, with the names users know them by.
TABLES = {
    "table1": "Table 1",
    "table2": "Table 2",
    "table4": "Table 4",
    "main_table": "main table",
    "objectives_table": "objectives",
    "significance": "significance",
    "paper_comparison": "paper comparison",
}
UNKNOWN = Estimate("", 0.0, 0.0, "no profile entry")


@dataclass
class JobCost:
    job: PlannedJob
    estimate: Estimate
    gpus: int
    threads: int

    @property
    def known(self) -> bool:
        return self.estimate is not UNKNOWN


def job_costs(config: dict, profile: DeviceProfile, jobs: list[PlannedJob], results: Folders | None) -> list[JobCost]:
    costs = []
    for job in jobs:
        estimate = job_estimate(config, profile, job.rule, job.wildcards, results) or UNKNOWN
        gpus = 0
        if profile.gpu and runs_a_model(job.rule):
            gpus = stage_request(task_config(config, job.wildcards["task"]), stage_of(job.rule))["gpu"]
        costs.append(JobCost(job, estimate, gpus, job.threads))
    return costs


def ancestors(jobs: list[PlannedJob], jobid: int) -> set[int]:
    by_id = {job.jobid: job for job in jobs}
    seen, stack = set(), [jobid]
    while stack:
        for parent in by_id[stack.pop()].after:
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return seen | {jobid}


def wall_seconds(costs: list[JobCost], slots: int, expected: bool = True, gpus: bool = False) -> float:
    """Wall time with `slots` parallel slots, jobs started in dependency order: the ready job of the highest
    priority first, as Snakemake starts them, and among equals the one with the longest chain of work still
    behind it (Snakemake's scheduler fills the cores among equals in no order a plan can know; the rules'
    priorities put the long chains first, rules/train.smk). Slots are cores (each job takes its threads'
    worth) or, on a GPU profile (`gpus`), GPUs (a model job takes its GPUs; the others run beside them on CPU
    nodes)."""
    seconds = {cost.job.jobid: cost.estimate.expected if expected else cost.estimate.upper for cost in costs}
    width = {cost.job.jobid: min(slots, cost.gpus if gpus else max(1, cost.threads)) for cost in costs}
    waiting = {cost.job.jobid: set(cost.job.after) & set(seconds) for cost in costs}
    children: dict[int, list[int]] = {jobid: [] for jobid in seconds}
    for jobid, parents in waiting.items():
        for parent in parents:
            children[parent].append(jobid)
    behind = chain_seconds(seconds, children)
    order = {cost.job.jobid: (-cost.job.priority, -behind[cost.job.jobid]) for cost in costs}
    ready = [jobid for jobid, parents in waiting.items() if not parents]
    running: list[tuple[float, int]] = []
    now, free = 0.0, slots
    while ready or running:
        ready.sort(key=order.__getitem__)
        for jobid in list(ready):
            if width[jobid] <= free:
                ready.remove(jobid)
                free -= width[jobid]
                heapq.heappush(running, (now + seconds[jobid], jobid))
        now, done = heapq.heappop(running)
        free += width[done]
        for child in children[done]:
            waiting[child].discard(done)
            if not waiting[child]:
                ready.append(child)
    return now


def chain_seconds(seconds: dict[int, float], children: dict[int, list[int]]) -> dict[int, float]:
    """Per job, its seconds plus the longest chain of its dependants' seconds after it."""
    chain: dict[int, float] = {}

    def of(jobid: int) -> float:
        if jobid not in chain:
            chain[jobid] = seconds[jobid] + max((of(child) for child in children[jobid]), default=0.0)
        return chain[jobid]

    for jobid in seconds:
        of(jobid)
    return chain


@dataclass(frozen=True)
class Row:
    name: str
    jobs: int
    expected_hours: float
    upper_hours: float
    gpu_hours: float
    cpu_hours: float
    unknown: int
    runtime: int | None = None  # the longest runtime request (minutes) among the jobs


def summed(name: str, costs: list[JobCost]) -> Row:
    return Row(
        name,
        len(costs),
        sum(cost.estimate.expected for cost in costs) / 3600,
        sum(cost.estimate.upper for cost in costs) / 3600,
        sum(cost.estimate.expected * cost.gpus for cost in costs) / 3600,
        sum(cost.estimate.expected * cost.threads for cost in costs if not cost.gpus) / 3600,
        sum(not cost.known for cost in costs),
        max((cost.job.runtime for cost in costs if cost.job.runtime is not None), default=None),
    )


def rows_by_rule(costs: list[JobCost]) -> list[Row]:
    rules = dict.fromkeys(cost.job.rule for cost in costs)
    return [summed(rule, [cost for cost in costs if cost.job.rule == rule]) for rule in rules]


def rows_by_table(costs: list[JobCost]) -> list[Row]:
    jobs = [cost.job for cost in costs]
    rows = []
    for cost in costs:
        if cost.job.rule in TABLES:
            needed = ancestors(jobs, cost.job.jobid)
            label = TABLES[cost.job.rule] + (f" ({cost.job.wildcards['task']})" if "task" in cost.job.wildcards else "")
            rows.append(summed(label, [c for c in costs if c.job.jobid in needed]))
    return rows


def render(rows: list[Row], title: str, limits: bool = False) -> str:
    lines = [f"{title:28s} {'jobs':>5s} {'expected h':>11s} {'upper h':>9s} {'GPU h':>9s} {'CPU h':>9s} {'limit min':>9s}"]
    for row in rows:
        flag = f"  ({row.unknown} jobs without an estimate)" if row.unknown else ""
        limit = f"{row.runtime:9d}" if limits and row.runtime is not None else f"{'':9s}"
        numbers = f"{row.expected_hours:11.3f} {row.upper_hours:9.3f} {row.gpu_hours:9.3f} {row.cpu_hours:9.3f} {limit}"
        lines.append(f"{row.name:28s} {row.jobs:5d} {numbers}{flag}")
    return "\n".join(lines)


def report(config: dict, profile: DeviceProfile, jobs: list[PlannedJob], folders: Folders, slots: int, startup: float) -> tuple[str, float]:
    """The plan as text, and its expected wall time in seconds (`startup`: the workflow's own, before any job).
    On a CPU profile it plans a local run, whose steps start warm (runtime/warm_start.py); on a GPU profile
    a cluster run, each job a fresh process on its node (as the SLURM time limits assume in either case)."""
    costs = job_costs(config, profile if profile.gpu else profile.started_warm(), jobs, folders)
    if not costs:
        return "nothing to run: every output is up to date (--all: the cost of building everything)", 0.0
    lines = [
        f"device profile {profile.path}: {profile.device} (measured {profile.measured['date']} at commit {profile.measured['commit']})",
        *(f"  rates of {line}" for line in origins(costs)),
        "",
        render(rows_by_rule(costs), "rule", limits=True),
        "",
        render(rows_by_table(costs), "table (with what it needs)"),
        "",
        "expected: each training run's updates as listed below; upper: every training run to its step cap. GPU h: jobs that",
        "ask for GPUs on a GPU profile; CPU h: the others, times their threads. limit min: the longest SLURM time limit a",
        "job of the rule asks for (cost.device_profile sets them).",
        "",
        *updates_lines(config, costs, folders),
        "",
    ]
    unknown = sum(not cost.known for cost in costs)
    if unknown:
        lines.append(
            f"{unknown} jobs have no estimate (no rates of their model on this device: python -m benchmarks.device_profile "
            "measures them): the wall times below leave them out, a LOWER BOUND"
        )
    walls = {}
    for bound, expected in (("expected", True), ("upper bound", False)):
        walls[bound] = wall_seconds(costs, slots, expected, profile.gpu) + startup
        minutes, hours, unit = walls[bound] / 60, walls[bound] / 3600, "GPUs" if profile.gpu else "cores"
        lines.append(f"wall time on {slots} {unit} ({bound}): {minutes:.1f} min ({hours:.2f} h), the workflow's start included")
    return "\n".join(lines), walls["expected"]


SOURCES = {
    PAST_RUN: "this experiment's finished runs (the mean of training_summary.csv)",
    RECORDED: "cost.expected_updates (measured on an earlier run of this recipe)",
    FIXED_BUDGET: "max_steps: no early stopping, every run makes them",
    CAP: "max_steps, an UPPER BOUND: early stopping ends it sooner (no count in cost.expected_updates)",
}


def updates_lines(config: dict, costs: list[JobCost], folders: Folders) -> list[str]:
    """Each training run's expected updates and where the figure comes from, one line per task and objective."""
    runs = {}
    for cost in costs:
        if cost.job.rule in TRAINING_RULES:
            task, objective = cost.job.wildcards["task"], cost.job.wildcards.get("objective", "mle")
            runs.setdefault((task, objective), expected_updates(config, cost.job.rule, task, objective, folders))
    lines = [f"{'task':20s} {'objective':20s} {'updates':>8s}  expected from"] if runs else []
    for (task, objective), (updates, source) in runs.items():
        lines.append(f"{task:20s} {objective:20s} {updates:8,d}  {SOURCES[source]}")
    return lines


def origins(costs: list[JobCost]) -> list[str]:
    """Where the rates came from, per task: measured on this profile's device or scaled."""
    seen = {}
    for cost in costs:
        if runs_a_model(cost.job.rule):
            seen.setdefault(cost.job.wildcards["task"], cost.estimate.origin)
    return [f"{task}: {origin}" for task, origin in seen.items()]
