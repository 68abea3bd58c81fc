"""Every fine-tuning loss described once, without torch, so the workflow can read it while it plans.

One `Loss` row per loss (rows.py says what a row holds), in a module per family: paper.py (GOLD, the
control, on-policy REINFORCE), peers.py (the token-weighting objectives of GOLD's time), recent.py (those of
2025-2026). A row gives the settings its loss reads (type, range, default, description), the helpers it
needs (`NEEDS`), how it is run (label smoothing, dropout), its label and colour in tables and figures, its
reference, and where its torch functions live. Everything else is derived from these rows:

- the `objective` part of the config schema (config/objective_schema.py: the `loss` enum, every setting, the
  per-loss defaults and required settings), and the check that no objective sets another loss's setting;
- the settings training reads (`ObjectiveSettings`, training/objective_settings.py), the helper models a job builds
  and the trainer's checks that it has them (`needs`);
- the rows of `objectives/table.py` (the torch functions, imported from `functions`);
- the labels and colours of `analysis/objective_names.py`, and docs/reference/objectives.md.

To add an objective: write its functions in a file of `objectives/`, add its row to its family's module,
and test it (the docs' "Add an objective" page walks through one).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import paper, peers, recent
from .rows import NEEDS, REQUIRED, Loss, Setting

__all__ = ["COMMON_SETTINGS", "DEFAULT_LOSS", "LOSSES", "NEEDS", "REQUIRED", "Loss", "Setting"]
LOSSES: dict[str, Loss] = {row.name: row for row in (*paper.ROWS, *peers.ROWS, *recent.ROWS)}
DEFAULT_LOSS = "gold"
# Settings of every objective whatever its loss (besides its loss's own).
COMMON_SETTINGS = {
    "start_from": Setting(
        {"type": "string"},
        "The model fine-tuning starts from: `mle` (the MLE model of the same seed) or another objective of the experiment "
        "(GOLD+PG starts from GOLD-s).",
        "mle",
    ),
    "label_smoothing": Setting(
        {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
        "Label smoothing epsilon of this objective, added unweighted: (1 - eps) times the loss plus eps times the mean NLL over the "
        "vocabulary. Unset: the loss's reference's own (0 where the reference does not smooth), or the fine-tuning block's "
        f"label_smoothing for {', '.join(name for name, row in LOSSES.items() if row.label_smoothing is None)}.",
    ),
}


def loss_of(objective: Mapping[str, Any]) -> Loss:
    """The row of an objective's loss (an entry of a task's `objectives`); a KeyError names the known ones."""
    name = objective.get("loss", DEFAULT_LOSS)
    if name not in LOSSES:
        raise KeyError(f"unknown loss '{name}' (known: {', '.join(LOSSES)})")
    return LOSSES[name]


def needs(objective: Mapping[str, Any]) -> frozenset[str]:
    """What an objective's loss needs besides the policy (a subset of NEEDS), given its settings."""
    return loss_of(objective).needs(objective)


def function_modules(losses: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The modules the torch functions of the rows of `losses` (default: all) live in; objectives/table.py imports them by name."""
    names = {ref.split(":")[0] for name, row in LOSSES.items() if losses is None or name in losses for ref in row.functions if ref}
    return tuple(sorted(f"gold_textgen.objectives.{name}" for name in names))


def foreign_settings(objective: Mapping[str, Any]) -> list[str]:
    """The keys of an objective that are settings of other losses, not of its own (they would be silently
    ignored); none for an unknown loss, which the schema reports."""
    row = LOSSES.get(objective.get("loss", DEFAULT_LOSS))
    if row is None:
        return []
    return [key for key in objective if key != "loss" and key not in row.settings and key not in COMMON_SETTINGS and readers(key)]


def readers(setting: str) -> list[str]:
    """The losses that read `setting`."""
    return [name for name, row in LOSSES.items() if setting in row.settings]
