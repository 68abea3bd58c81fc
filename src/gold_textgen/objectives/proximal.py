"""PSFT, proximal supervised fine-tuning (Zhu et al. 2025, "Proximal Supervised Fine-Tuning"): SFT read as
a policy gradient with advantage 1 on the demonstrations, trained with PPO's clipped surrogate,

    L = -(1/N) sum_t min(r_t, clip(r_t, 1 - eps_low, 1 + eps_high)),   r_t = pi_theta(y_t) / pi_old(y_t).

As zwhong714/PSFT: the advantage is 1 on every response token (verl/verl/trainer/ppo/ray_trainer.py,
`compute_advantage`, the PSFT branch, lines 274-276) and the loss is verl's vanilla PPO policy loss
(verl/verl/trainer/ppo/core_algos.py, `compute_policy_loss_vanilla`, lines 817-891: log-ratio clamped to
[-20, 20], token mean), with run_psft.sh's clip_ratio_low 0.2 and clip_ratio_high 0.28. With advantage 1
the dual-clip branch (negative advantages) never applies. The gradient is r_t grad log pi_theta(y_t)
while r_t <= 1 + eps_high and 0 above it: SFT's gradient, reweighted by how far the policy has moved from
pi_old, and cut off where it has moved up too far.

pi_old: the reference recomputes it at the start of each rollout batch (train batch 64 prompts in
mini-batches of 8: pi_old is the policy of 8 updates ago at most). Here pi_old is the lagged policy
pi_tilde that GOLD keeps, re-synced every `sync_every` updates (default 8, the reference's) and saved in
every checkpoint. verl computes pi_old's log-probs and the policy's in the same state (LLMs fine-tuned
without dropout), so the ratio is exactly 1 right after a sync; the trainer runs the policy's forward
without dropout for this loss (the catalog's `dropout: False`) to keep that.
"""

from __future__ import annotations

import torch

LOG_RATIO_LIMIT = 20.0  # verl clamps the log-ratio for stability


def clipped_surrogate_sum(
    policy_token_logprobs: torch.Tensor, old_token_logprobs: torch.Tensor, mask: torch.Tensor, clip_low: float, clip_high: float
) -> torch.Tensor:
    """sum over real tokens of -min(r, clip(r, 1 - clip_low, 1 + clip_high)) with advantage 1.

    `policy_token_logprobs` [B, T] carry the gradient; `old_token_logprobs` [B, T] are pi_old's, detached."""
    log_ratio = (policy_token_logprobs - old_token_logprobs.detach()).clamp(-LOG_RATIO_LIMIT, LOG_RATIO_LIMIT)
    ratio = log_ratio.exp()
    surrogate = torch.minimum(ratio, ratio.clamp(1.0 - clip_low, 1.0 + clip_high))
    return torch.where(mask, -surrogate, torch.zeros_like(surrogate)).sum()


def clipped_surrogate_batch_sum(batch, settings, state) -> torch.Tensor:
    return clipped_surrogate_sum(batch.reference, batch.lagged, batch.mask, settings.clip_low, settings.clip_high)
