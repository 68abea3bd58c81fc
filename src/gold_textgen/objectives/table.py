"""Every fine-tuning loss as torch functions, looked up from its row of the catalog
(`catalog/`, which names them): the per-token weights it puts on the reference NLL
(`weighted_nll`), and, for the losses that are not a weighted NLL, the extra term it adds. The trainer
computes what a batch offers (`TokenBatch`) and looks the loss up here.

Weights are detached; an extra term is a sum over the batch's tokens (with gradient) that the trainer
divides by the reference tokens of the whole update, like the weighted NLL. A loss whose whole value is its
extra term (PSFT, the probability family) puts weight 0 on the NLL, which keeps only the unweighted label
smoothing of its objective.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ..catalog import LOSSES as CATALOG


@dataclass
class TokenBatch:
    """What one batch of references offers an objective ([B, T] per token, [B, T, V] per vocabulary entry)."""

    logprobs: torch.Tensor  # [B, T, V] log-softmax of the policy being trained, with gradient
    reference: torch.Tensor  # [B, T] the policy's log-probs of the reference tokens, with gradient (0 at padding)
    mask: torch.Tensor  # [B, T] True on real reference tokens
    lagged: torch.Tensor | None = None  # [B, T] pi_tilde's log-probs of the references (need lagged_policy)
    mle: torch.Tensor | None = None  # [B, T] the frozen MLE model's, cached or online (need mle_rewards)
    anchor: torch.Tensor | None = None  # [B, T, V] the frozen starting model's log-softmax (need anchor)

    @property
    def own(self) -> torch.Tensor:
        """The policy's reference log-probs, detached: what the self-weighting objectives read."""
        return self.reference.detach()


# (batch, settings, state) -> [B, T] weights, or a summed term with gradient; `state` holds what a loss
# keeps across steps (loss truncation's cut-off: `state.truncation`).
LossFunction = Callable[[TokenBatch, Any, Any], torch.Tensor]


@dataclass(frozen=True)
class LossEntry:
    weights: LossFunction
    extra: LossFunction | None = None


def _zeros(batch: TokenBatch, settings, state) -> torch.Tensor:
    return torch.zeros_like(batch.own)


def _function(reference: str | None) -> LossFunction | None:
    """The function a catalog row names as "module:function" (a module of this package)."""
    if reference is None:
        return None
    module, name = reference.split(":")
    return getattr(importlib.import_module(f"{__package__}.{module}"), name)


LOSSES: dict[str, LossEntry] = {
    name: LossEntry(_function(row.functions[0]) or _zeros, _function(row.functions[1])) for name, row in CATALOG.items()
}
