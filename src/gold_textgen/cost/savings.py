"""What shrinking an experiment would save: the plan's jobs costed again with one setting halved at a time
(the seeds, a training block's step cap, its dev evaluations, the model's width), and the three that
save most, so that a user with a time budget knows which keys to shrink first (`gold-textgen plan
--device ...` prints them under the wall time)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

from .device_profile import DeviceProfile
from .dry_run import PlannedJob
from .plan import job_costs, wall_seconds
from .work import Folders

SHOWN = 3


@dataclass(frozen=True)
class Saving:
    setting: str  # the key, dotted, as --set takes it
    value: str  # the value it would take
    wall: float  # the expected wall time with it, seconds


def _halved(config: dict, path: list[str]) -> tuple[dict, str] | None:
    """`config` with the integer at `path` halved (None where it is missing, null or below 2)."""
    changed = copy.deepcopy(config)
    block = changed
    for key in path[:-1]:
        block = block.get(key)
        if not isinstance(block, dict):
            return None
    value = block.get(path[-1])
    if not isinstance(value, int) or isinstance(value, bool) or value < 2:
        return None
    block[path[-1]] = value // 2
    return changed, str(value // 2)


def candidates(config: dict) -> list[tuple[str, str, dict, Callable[[PlannedJob], bool]]]:
    """(setting, its new value, the config with it, which jobs remain) for each setting a halving applies to."""
    keep_all = lambda job: True  # noqa: E731
    found = []
    seeds = config["experiment"]["seeds"]
    if len(seeds) >= 2:
        kept = seeds[: (len(seeds) + 1) // 2]
        changed = copy.deepcopy(config)
        changed["experiment"]["seeds"] = kept
        dropped = {str(seed) for seed in seeds[len(kept) :]}
        found.append(("experiment.seeds", str(kept), changed, lambda job: job.wildcards.get("seed") not in dropped))
    for task in config["experiment"]["tasks"]:
        settings = config["tasks"][task]
        paths = [["mle", "max_steps"], ["fine_tune", "max_steps"], ["mle", "eval_max_examples"], ["fine_tune", "eval_max_examples"]]
        if settings.get("model", {}).get("kind") == "scratch":
            paths += [["model", "d_model"], ["model", "ffn_dim"]]
        for path in paths:
            halved = _halved(config, ["tasks", task, *path])
            if halved is not None:
                found.append((".".join(["tasks", task, *path]), halved[1], halved[0], keep_all))
    return found


def expected_wall(config: dict, profile: DeviceProfile, jobs: list[PlannedJob], folders: Folders, slots: int) -> float:
    return wall_seconds(job_costs(config, profile, jobs, folders), slots, True, profile.gpu)


def biggest_savings(
    config: dict, profile: DeviceProfile, jobs: list[PlannedJob], folders: Folders, slots: int, base: float
) -> list[Saving]:
    """The SHOWN settings whose halving saves the most expected wall time below `base`, the plan's own (none
    that saves nothing)."""
    found = []
    for setting, value, changed, kept in candidates(config):
        wall = expected_wall(changed, profile, [job for job in jobs if kept(job)], folders, slots)
        found.append(Saving(setting, value, wall))
    return sorted((saving for saving in found if saving.wall < base), key=lambda saving: saving.wall)[:SHOWN]


def savings_lines(config: dict, profile: DeviceProfile, jobs: list[PlannedJob], folders: Folders, slots: int) -> list[str]:
    """The plan's lines on what shrinking would save, each with the --set that does it."""
    base = expected_wall(config, profile, jobs, folders, slots)
    savings = biggest_savings(config, profile, jobs, folders, slots, base)
    if not savings or base <= 0:
        return []
    lines = ["what costs most (each setting halved alone; the expected wall time with it, and the --set that does it):"]
    for saving in savings:
        share = 100 * (1 - saving.wall / base)
        flag = f"--set {saving.setting}={saving.value.replace(' ', '')}"
        lines.append(f"  {saving.setting}: {saving.wall / 60:.1f} min ({share:.0f}% less)   {flag}")
    return lines
