"""Seconds a job takes on a device: its work (work.py) at the device's measured rates (device_profile.py),
and the SLURM runtime request made from it."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..config.views import task_config
from .device_profile import DeviceProfile
from .work import Folders, JobWork, job_work

MODEL_RULES = ("train_mle", "fine_tune", "cache_rewards")


def runs_a_model(rule: str) -> bool:
    return rule in MODEL_RULES or rule.startswith("evaluate_")


def stage_of(rule: str) -> str:
    """The resource-table stage (resources.py) of a model rule: evaluate_<split> is `evaluate`."""
    return "evaluate" if rule.startswith("evaluate_") else rule


@dataclass(frozen=True)
class Estimate:
    """A job's seconds: `expected` (updates of past runs where known) and `upper` (every update to the cap);
    `origin` says how the rates were obtained (`measured`, `scaled from ...`, or `no profile entry`)."""

    rule: str
    expected: float
    upper: float
    origin: str


def work_seconds(work: JobWork, rates) -> float:
    """The seconds of `work` at `rates` (device_profile.Rates), the job's start included."""
    examples = work.updates * work.batch_size
    update = rates.fine_tune_update if work.fine_tuning else rates.update
    update += work.helper_forwards * rates.forward + (rates.decode_seconds(1) if work.sampling else 0.0)
    seconds = rates.job_start + examples * update
    seconds += work.dev_decoded * rates.decode_seconds(work.dev_beams)
    seconds += work.scored * rates.forward
    seconds += sum(examples * rates.decode_seconds(beams) for beams, examples in work.decoded.items())
    return seconds


def job_estimate(config: dict, profile: DeviceProfile, rule: str, wildcards: dict, results: Folders | None = None) -> Estimate | None:
    """Expected and upper-bound seconds of one job, or None where the profile holds nothing to scale from."""
    if not runs_a_model(rule):
        return Estimate(rule, profile.cpu_job, profile.cpu_job, "measured")
    rates = profile.rates(task_config(config, wildcards["task"]))
    if rates is None:
        return None
    expected = work_seconds(job_work(config, rule, wildcards, expected=True, results=results), rates)
    upper = work_seconds(job_work(config, rule, wildcards, expected=False, results=results), rates)
    return Estimate(rule, expected, upper, rates.origin)


def runtime_minutes(estimate: Estimate, safety_factor: float, minimum: int) -> int:
    """A SLURM time limit for the job: its expected time times the safety factor, at least `minimum` minutes
    (a job that still overruns is killed, and the next run resumes it from its last checkpoint)."""
    return max(minimum, math.ceil(estimate.expected * safety_factor / 60))
