"""Stopping a run whose loss or gradient stopped being a number.

transformers' logging replaces a NaN or infinite step loss by the mean of the others
(`logging_nan_inf_filter`), so a diverged run logs plausible losses while its weights are NaN and its
checkpoints and model are worthless. The training arguments turn that filter off (trainer.py), and this
callback stops the job at the first logged loss or gradient norm that is not finite: at a logging step,
before the save of the same step, so the last complete checkpoint is still a good one."""

from __future__ import annotations

import math
from pathlib import Path

from transformers import TrainerCallback

from .checkpoints import last_complete_checkpoint


class TrainingDiverged(RuntimeError):
    """The loss or gradient norm became NaN or infinite; the message says at which update and what to try."""


class DivergenceGuard(TrainerCallback):
    """Raises TrainingDiverged from the first log whose `loss` or `grad_norm` is not finite."""

    WATCHED = ("loss", "grad_norm")

    def __init__(self, settings: dict):
        self.settings = settings

    def on_log(self, args, state, control, logs=None, **kwargs):
        for key in self.WATCHED:
            value = (logs or {}).get(key)
            if value is not None and not math.isfinite(float(value)):
                raise TrainingDiverged(self.message(key, float(value), state.global_step, args.output_dir))

    def message(self, key: str, value: float, step: int, checkpoint_dir: str) -> str:
        kept = last_complete_checkpoint(Path(checkpoint_dir), remove_incomplete=False)
        settings = self.settings
        hints = [
            f"a lower learning_rate (now {settings['learning_rate']})",
            f"a longer warmup_steps (now {settings['warmup_steps']})",
            f"gradient clipping, max_grad_norm (now {settings['max_grad_norm']})",
        ]
        if settings.get("precision", "fp32") != "fp32":
            hints.append(f"precision fp32 (now {settings['precision']})")
        return (
            f"training diverged: the {key} logged at update {step} is {value}, so the weights are no longer numbers. "
            f"The last good checkpoint is {kept or 'none (it diverged before the first save)'}; with unchanged settings a "
            f"rerun resumes from it and diverges again. Try {', '.join(hints)}"
        )
