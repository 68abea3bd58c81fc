"""Every fine-tuning loss of the grid as one entry: the per-token weights it puts on the reference NLL
(`weighted_nll`), and, for the losses that are not a weighted NLL, the extra term it adds. The trainer
computes what a batch offers (`TokenBatch`) and looks the loss up here; a new objective is a pure
function in its own file plus one entry below.

Weights are detached; an extra term is a sum over the batch's tokens (with gradient) that the trainer
divides by the reference tokens of the whole update, like the weighted NLL. A loss whose whole value is its
extra term (PSFT, the probability family) puts weight 0 on the NLL, which keeps only the unweighted label
smoothing that every objective shares.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from .anchored import anchor_kl_sum
from .entropy_weighting import entropy_weights
from .gold import importance_weights
from .importance_weighted import sequence_importance_weights
from .loss_truncation import sequence_losses
from .probability_family import probability_family_sum
from .proximal import clipped_surrogate_sum
from .token_weighting import dft_weights, mixce_weights, tailr_weights


@dataclass
class TokenBatch:
    """What one batch of references offers an objective ([B, T] per token, [B, T, V] per vocabulary entry)."""

    logprobs: torch.Tensor  # [B, T, V] log-softmax of the policy being trained, with gradient
    reference: torch.Tensor  # [B, T] the policy's log-probs of the reference tokens, with gradient (0 at padding)
    mask: torch.Tensor  # [B, T] True on real reference tokens
    lagged: torch.Tensor | None = None  # [B, T] pi_tilde's log-probs of the references (GOLD, PSFT)
    mle: torch.Tensor | None = None  # [B, T] the frozen MLE model's (cached or online: GOLD-p/s, iw-SFT)
    anchor: torch.Tensor | None = None  # [B, T, V] the frozen starting model's log-softmax (ASFT)

    @property
    def own(self) -> torch.Tensor:
        """The policy's reference log-probs, detached: what the self-weighting objectives read."""
        return self.reference.detach()


Weights = Callable[[TokenBatch, Any, Any], torch.Tensor]
Extra = Callable[[TokenBatch, Any], torch.Tensor]


@dataclass(frozen=True)
class LossEntry:
    weights: Weights  # (batch, settings, state) -> [B, T]; `state` holds what a loss keeps across steps
    extra: Extra | None = None  # (batch, settings) -> a summed loss term with gradient


def _ones(batch: TokenBatch, settings, state) -> torch.Tensor:
    return torch.ones_like(batch.own)


def _zeros(batch: TokenBatch, settings, state) -> torch.Tensor:
    return torch.zeros_like(batch.own)


def _gold(batch: TokenBatch, settings, state) -> torch.Tensor:
    return importance_weights(batch.own if batch.lagged is None else batch.lagged, settings.min_weight)


def _truncated(batch: TokenBatch, settings, state) -> torch.Tensor:
    keep = state.truncation.keep(sequence_losses(-batch.own, batch.mask))
    return keep.unsqueeze(-1).expand_as(batch.own)


LOSSES: dict[str, LossEntry] = {
    "gold": LossEntry(_gold),  # times its returns, which the trainer builds from the MLE rewards
    "dft": LossEntry(lambda b, s, _: dft_weights(b.own)),
    "tailr": LossEntry(lambda b, s, _: tailr_weights(b.own, s.density_ratio_threshold, s.min_weight)),
    "mixce": LossEntry(lambda b, s, _: mixce_weights(b.own, s.mixing_ratio)),
    "loss_truncation": LossEntry(_truncated),
    "nll": LossEntry(_ones),
    "policy_gradient": LossEntry(_ones),  # its updates on the references; the sampled ones are its own
    "asft": LossEntry(lambda b, s, _: dft_weights(b.own), lambda b, s: s.kl_weight * anchor_kl_sum(b.logprobs, b.anchor, b.mask)),
    "psft": LossEntry(_zeros, lambda b, s: clipped_surrogate_sum(b.reference, b.lagged, b.mask, s.clip_low, s.clip_high)),
    "iw_sft": LossEntry(lambda b, s, _: sequence_importance_weights(b.own, b.mle, b.mask, s.temperature, s.max_weight)),
    "probability": LossEntry(_zeros, lambda b, s: probability_family_sum(b.reference, b.mask, s.alpha, s.threshold, s.threshold_side)),
    "eaft": LossEntry(lambda b, s, _: entropy_weights(b.logprobs, s.top_k, s.normaliser, s.alpha)),
}
