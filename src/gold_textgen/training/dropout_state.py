"""A policy forward pass without dropout, for the losses that compare the policy with a frozen model in
eval mode (PSFT's ratio, iw-SFT's weight, ASFT's KL): their references fine-tune without dropout, so the
comparison is exact (ratio 1, weight 1, KL 0) when the two models are equal. With dropout on one side only
these would be noise at step 0 (measured on the demo MLE model: 6.8% of PSFT's tokens clipped to zero
gradient, iw-SFT's weights spread over 0.53-1.51, ASFT's KL floored at 0.1 nats a token). Gradients flow
as usual; only the modules' train/eval flags change, and they are restored exactly."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

import torch


@contextmanager
def without_dropout(model: torch.nn.Module) -> Iterator[None]:
    """Run the block with every module of `model` in eval mode, then restore each module's own flag."""
    modes = _switch_off(model)
    try:
        yield
    finally:
        _restore(modes)


def dropout_as_the_loss_compares(model: torch.nn.Module, settings) -> AbstractContextManager:
    """The policy's forward pass as its loss needs it (`settings`: ObjectiveSettings): with dropout, or
    without where the loss compares the policy with a frozen model (the catalog's `dropout`)."""
    return nullcontext() if settings.policy_dropout else without_dropout(model)


def forward_without_dropout(model: torch.nn.Module) -> None:
    """Make every later forward call of `model` run without dropout (for a Trainer whose forward pass the
    caller does not run itself, as TRL's SFTTrainer)."""
    pending: list[list[tuple[torch.nn.Module, bool]]] = []

    def before(module, args):
        pending.append(_switch_off(module))

    def after(module, args, output):
        _restore(pending.pop())

    model.register_forward_pre_hook(before)
    model.register_forward_hook(after)


def _switch_off(model: torch.nn.Module) -> list[tuple[torch.nn.Module, bool]]:
    modes = [(module, module.training) for module in model.modules()]
    model.eval()
    return modes


def _restore(modes: list[tuple[torch.nn.Module, bool]]) -> None:
    for module, training in modes:
        module.training = training
