"""ASFT, anchored supervised fine-tuning (Zhu et al. 2025, "Anchored Supervised Fine-Tuning"): DFT's loss
plus a KL anchor to the frozen starting model,

    L = (1/N) sum_t [ p_t nll_t + lambda * KL(pi_0(. | y_<t, x) || pi_theta(. | y_<t, x)) ],   p_t detached,

N the reference tokens. As zhuchichi56/ASFT train_v2.py, `EnhancedTrainer.compute_loss`, mode "asft"
(lines 146-173): DFT's token losses plus `kl_weight` times `F.kl_div(log_softmax(policy),
softmax(reference)).sum(-1)`, i.e. KL(pi_0 || pi_theta) over the whole vocabulary at every reference
position, averaged over the valid tokens with the DFT part; lambda (`kl_weight`) defaults to 0.1 (lines
62 and 309). pi_0 is the model fine-tuning starts from (the MLE model of the seed), frozen: it needs that
model's full distribution at every step, so ASFT always runs a frozen forward pass (no cache can hold it).
"""

from __future__ import annotations

import torch


def anchor_kl_sum(policy_logprobs: torch.Tensor, anchor_logprobs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """sum over real tokens of KL(pi_0 || pi_theta) = sum_v pi_0(v) (log pi_0(v) - log pi_theta(v)).

    `policy_logprobs` [B, T, V] carries the gradient; `anchor_logprobs` [B, T, V] (the frozen model's
    log-softmax) is detached; `mask` [B, T] marks the reference tokens. Vocabulary entries the anchor gives
    no mass (a copy model's unused placeholders: log 0) add nothing, as in F.kl_div."""
    anchor = anchor_logprobs.detach()
    probs = anchor.exp()
    per_entry = torch.where(probs > 0, probs * (anchor - policy_logprobs), torch.zeros_like(policy_logprobs))
    per_token = per_entry.sum(-1)
    return torch.where(mask, per_token, torch.zeros_like(per_token)).sum()
