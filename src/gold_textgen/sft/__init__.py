"""The objectives outside the workflow: a loss for a plain transformers Trainer (trainer_losses.py), TRL's
SFTTrainer with any objective (sft_trainer.py), and the `gold-textgen sft` command (sft_command.py, its
checks in sft_checks.py).

The library's entry points are imported from here, whichever module holds them:
`from gold_textgen.sft import ObjectiveLoss, ObjectiveSFTTrainer`. They load on first use, so that the
`gold-textgen sft` command checks a config before it imports TRL."""

from __future__ import annotations

import importlib

ENTRY_POINTS = {"ObjectiveLoss": ".trainer_losses", "ObjectiveSFTTrainer": ".sft_trainer"}
__all__ = sorted(ENTRY_POINTS)


def __getattr__(name: str):
    if name not in ENTRY_POINTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(ENTRY_POINTS[name], __name__), name)
