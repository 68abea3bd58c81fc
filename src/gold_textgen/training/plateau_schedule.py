"""The learning-rate schedule of clovaai/FocusSeq2Seq (train.py, lines 487-497), by name `halve_on_plateau`:
after each dev evaluation, once `halving_patience` evaluations in a row have not beaten the best, halve the
learning rate, and again after every further evaluation without improvement, while the rate is still at
least `min_learning_rate`; an improvement resets the count. FocusSeq2Seq evaluates once per epoch, so its
"3 epochs without improvement" is `halving_patience: 3` with `eval_steps` = the updates of one epoch.

The schedule is a LambdaLR whose multiplier is a `PlateauHalving` object: LambdaLR keeps a callable
object's attributes in its state_dict, so the Trainer's `scheduler.pt` in every checkpoint carries the
halvings, the best dev value and the count, and a resumed run halves exactly where the uninterrupted one does.
"""

from __future__ import annotations

import logging

from torch.optim.lr_scheduler import LambdaLR
from transformers import TrainerCallback

log = logging.getLogger(__name__)

NAME = "halve_on_plateau"
# What the Trainer's arguments are told (its own scheduler is never built for this schedule).
STAND_IN = "constant_with_warmup"


class PlateauHalving:
    """The multiplier of the base learning rate after `step` updates: a linear warmup, then 0.5 to the
    power of the halvings so far. `observe` takes each dev evaluation."""

    def __init__(self, learning_rate: float, warmup_steps: int, patience: int, min_learning_rate: float):
        self.learning_rate = learning_rate
        self.warmup_steps = warmup_steps
        self.patience = patience
        self.min_learning_rate = min_learning_rate
        self.factor = 1.0
        self.best: float | None = None
        self.without_improvement = 0
        self.halvings: list[int] = []  # the updates after whose evaluation the rate was halved

    def __call__(self, step: int) -> float:
        warmup = min(1.0, (step + 1) / self.warmup_steps) if self.warmup_steps else 1.0
        return warmup * self.factor

    def observe(self, step: int, value: float) -> None:
        if self.best is None or value > self.best:
            self.best, self.without_improvement = value, 0
            return
        self.without_improvement += 1
        if self.without_improvement >= self.patience and self.learning_rate * self.factor >= self.min_learning_rate:
            self.factor *= 0.5
            self.halvings.append(step)
            rate = self.learning_rate * self.factor
            log.info("dev metric has not improved for %d evaluations: learning rate halved to %.3g", self.without_improvement, rate)


class HalvingOnPlateau(TrainerCallback):
    """Feeds each dev evaluation of `metric` to the schedule."""

    def __init__(self, schedule: PlateauHalving, metric: str):
        self.schedule = schedule
        self.key = f"eval_{metric}"

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        if metrics and self.key in metrics:
            self.schedule.observe(state.global_step, float(metrics[self.key]))


class PlateauScheduled:
    """Trainer mixin: with `plateau_schedule` set, the learning rate follows it instead of the scheduler
    named in the arguments."""

    plateau_schedule: PlateauHalving | None = None

    def create_scheduler(self, num_training_steps: int, optimizer=None):
        if self.plateau_schedule is None:
            return super().create_scheduler(num_training_steps, optimizer)
        if self.lr_scheduler is None:
            self.lr_scheduler = LambdaLR(optimizer or self.optimizer, self.plateau_schedule)
        return self.lr_scheduler


def plateau_schedule(settings: dict) -> PlateauHalving | None:
    """The schedule a stage's settings ask for, or None for a transformers scheduler."""
    if settings["lr_scheduler"] != NAME:
        return None
    return PlateauHalving(settings["learning_rate"], settings["warmup_steps"], settings["halving_patience"], settings["min_learning_rate"])
