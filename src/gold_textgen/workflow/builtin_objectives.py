"""Objectives every task has without a config entry.

`mle_continued` is the control that tells a gain of GOLD from a gain of more training: loss `nll` (weight 1
on every reference token) from the same MLE model, on the same fine-tuning schedule (the task's `fine_tune`
section) as the GOLD objectives. A task may still define `mle_continued` itself; its entry is kept.
"""

from __future__ import annotations

CONTROL = "mle_continued"
BUILTIN_OBJECTIVES = {CONTROL: {"loss": "nll"}}


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
