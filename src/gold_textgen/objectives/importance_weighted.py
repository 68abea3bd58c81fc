"""Importance-weighted SFT (Qin & Springenberg 2025, "Supervised Fine Tuning on Curated Data is
Reinforcement Learning (and can be improved)"): each demonstration's NLL is weighted by a clipped
sequence-level importance weight of the policy against a reference policy,

    w = clamp(exp(tau * mean_t(log pi_theta(y_t) - log pi_ref(y_t))), 0, w_max),   stop-gradient,

the same w for every token of the sequence. As emmyqin/iw_sft bounding_trainers.py, `IwSFTLoss.__call__`
(lines 47-62, `sum_over_time=True`): the mean of the log-ratio over the sequence's non-padding tokens,
exp(temp * diff) clamped to [0, 16], under no_grad; the trainer calls it with temp = 1.0 (line 211).
pi_ref is the frozen MLE model the fine-tuning starts from, whose reference log-probabilities the reward
cache holds (or a frozen forward pass computes, `rewards: online`). The reference fine-tunes LLMs without
dropout, so every weight is exactly 1 at step 0; the trainer runs the policy's forward without dropout
for this loss (the catalog's `dropout: False`) to keep that.
"""

from __future__ import annotations

import torch


def sequence_importance_weights(
    policy_token_logprobs: torch.Tensor, reference_token_logprobs: torch.Tensor, mask: torch.Tensor, temperature: float, max_weight: float
) -> torch.Tensor:
    """[B, T] weights (detached): each sequence's clipped importance weight on all its positions."""
    difference = (policy_token_logprobs.detach() - reference_token_logprobs.detach()).masked_fill(~mask, 0.0)
    mean = difference.sum(-1) / mask.sum(-1).clamp_min(1)
    weight = (temperature * mean).exp().clamp(0.0, max_weight)
    return weight.unsqueeze(-1).expand_as(policy_token_logprobs)


def sequence_importance_batch_weights(batch, settings, state) -> torch.Tensor:
    return sequence_importance_weights(batch.own, batch.mle, batch.mask, settings.temperature, settings.max_weight)
