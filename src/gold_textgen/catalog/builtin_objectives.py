"""Objectives every task has without a config entry.

`mle_continued` is the control that tells a gain of GOLD from a gain of more training: loss `nll` (weight 1
on every reference token) from the same MLE model, on the same fine-tuning schedule (the task's `fine_tune`
section) as the GOLD objectives. A task may still define `mle_continued` itself; its entry is kept.
"""

from __future__ import annotations

from . import LOSSES

CONTROL = "mle_continued"
BUILTIN_OBJECTIVES = {CONTROL: {"loss": "nll"}}
# Names that tables and figures label and place by themselves (analysis/objective_names.py), with the
# settings each label claims: an objective of such a name must have them, or the control would be another
# loss, or "DFT" MixCE's numbers. Any other name is the user's own and is shown as written.
GOLD_REWARDS = {"gold_delta": "delta", "gold_p": "p", "gold_s": "s", "gold_s_no_lag": "s", "gold_s_u0": "s", "gold_s_h0": "s"}
NAMED_OBJECTIVES = {
    CONTROL: {"loss": "nll"},
    **{name: {"loss": "gold", "reward": reward} for name, reward in GOLD_REWARDS.items()},
    **{name: {"loss": "policy_gradient"} for name in ("mle_pg", "gold_pg")},
    **{name: {"loss": name} for name in LOSSES if name not in ("gold", "nll", "policy_gradient")},
}


def misnamed_objectives(objectives: dict) -> list[str]:
    """`name: what its label claims, what it is` for each objective whose name claims other settings."""
    found = []
    for name, settings in objectives.items():
        claimed = NAMED_OBJECTIVES.get(name, {})
        differs = {key: value for key, value in claimed.items() if settings.get(key) != value}
        if differs:
            have = ", ".join(f"{key} {settings.get(key)!r}" for key in differs)
            want = ", ".join(f"{key} {value!r}" for key, value in differs.items())
            found.append(f"{name}: tables label it as {want}, but it has {have}")
    return found


def add_builtin_objectives(config: dict) -> None:
    """Give every task of `config` the built-in objectives it does not define (in place, before the schema
    fills in defaults); a malformed `tasks` or `objectives` is left for the schema to report."""
    tasks = config.get("tasks")
    for task in tasks.values() if isinstance(tasks, dict) else ():
        if not isinstance(task, dict):
            continue
        objectives = task.setdefault("objectives", {})
        if isinstance(objectives, dict):
            for name, settings in BUILTIN_OBJECTIVES.items():
                objectives.setdefault(name, dict(settings))
