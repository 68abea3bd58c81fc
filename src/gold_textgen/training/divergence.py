"""Stopping a run whose loss or gradient stopped being a number.

transformers' logging replaces a NaN or infinite step loss by the mean of the others
(`logging_nan_inf_filter`), so a diverged run logs plausible losses while its weights are NaN and its
checkpoints and model are worthless. The training arguments turn that filter off (trainer.py), and this
callback stops the job at the first logged loss or gradient norm that is not finite. Logging steps need
not fall on saving steps (eval_steps 109 logs at 105 and 126, saves at 109), so it also checks the
weights of every checkpoint before the completion marker is written (it is registered before
CheckpointCompletion): weights that are not finite stop the job and leave that checkpoint incomplete, so it
is never resumed, and the last complete checkpoint is still a good one."""

from __future__ import annotations

import math
from pathlib import Path

import torch
from transformers import TrainerCallback

from ..checkpoints.resuming import last_complete_checkpoint


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
                raise TrainingDiverged(self.message(f"the {key} logged at update {state.global_step} is {float(value)}", args.output_dir))

    def on_save(self, args, state, control, model=None, **kwargs):
        if model is None:
            return
        with torch.no_grad():
            broken = next((name for name, weight in model.named_parameters() if not torch.isfinite(weight).all()), None)
        if broken is not None:
            step = state.global_step
            found = f"weight {broken} is not finite after update {step} (checkpoint-{step} is left incomplete, never resumed)"
            raise TrainingDiverged(self.message(found, args.output_dir))

    def message(self, found: str, checkpoint_dir: str) -> str:
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
            f"training diverged: {found}, so the weights are no longer numbers. "
            f"The last good checkpoint is {kept or 'none (it diverged before the first save)'}; with unchanged settings a "
            f"rerun resumes from it and diverges again. Try {', '.join(hints)}"
        )
