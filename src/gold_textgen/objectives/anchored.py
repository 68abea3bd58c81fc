"""ASFT, anchored supervised fine-tuning (Zhu et al. 2025, "Anchored Supervised Fine-Tuning"): DFT's loss
plus a KL anchor to the frozen starting model pi_0,

    L = (1/N) sum_t [ p_t nll_t + lambda * KL_t ],   p_t detached,   N the reference tokens.

Which KL: the paper (Eq. 6 and section 5.3) writes KL(pi_theta || pi_0) and reports the other direction
worse; every code path of the authors (zhuchichi56/ASFT train_v2.py, `EnhancedTrainer.compute_loss`, mode
"asft", lines 146-173; its verl trainer; LLaMA-Factory's port) computes `F.kl_div(log_softmax(policy),
softmax(reference)).sum(-1)`, i.e. KL(pi_0 || pi_theta), over the whole vocabulary at every reference
position, averaged over the valid tokens with the DFT part. Both are offered by name (`kl_direction`):
`anchor_to_policy` = KL(pi_0 || pi_theta), the code's and the default, since the code is what produced
the released numbers; `policy_to_anchor` = KL(pi_theta || pi_0), the paper's. Likewise lambda: the code
and its run scripts (train_v2.sh, run_sft_variants_med.sh) use 0.1, the default here; the paper's runs
report 0.05.

pi_0 is the model fine-tuning starts from (the MLE model of the seed), frozen: its full distribution is
needed at every step, so ASFT always runs a frozen forward pass (no cache can hold it). The reference
fine-tunes LLMs without dropout, so at step 0 the KL is exactly 0; the trainer runs the policy's forward
without dropout for this loss (the catalog's `dropout: False`) to keep that.
"""

from __future__ import annotations

import torch

KL_DIRECTIONS = ("anchor_to_policy", "policy_to_anchor")


def anchor_kl_sum(
    policy_logprobs: torch.Tensor, anchor_logprobs: torch.Tensor, mask: torch.Tensor, direction: str = "anchor_to_policy"
) -> torch.Tensor:
    """sum over real tokens of KL(pi_0 || pi_theta) = sum_v pi_0(v) (log pi_0(v) - log pi_theta(v))
    (`direction` anchor_to_policy), or of KL(pi_theta || pi_0) (policy_to_anchor).

    `policy_logprobs` [B, T, V] carries the gradient; `anchor_logprobs` [B, T, V] (the frozen model's
    log-softmax) is detached; `mask` [B, T] marks the reference tokens. Vocabulary entries the weighting
    distribution gives no mass (a copy model's unused placeholders: log 0) add nothing, as in F.kl_div."""
    if direction not in KL_DIRECTIONS:
        raise ValueError(f"direction must be one of {KL_DIRECTIONS}, got '{direction}'")
    anchor = anchor_logprobs.detach()
    if direction == "anchor_to_policy":
        weight, log_ratio = anchor.exp(), anchor - policy_logprobs
    else:
        weight, log_ratio = policy_logprobs.exp(), policy_logprobs - anchor
    per_entry = torch.where(weight > 0, weight * log_ratio, torch.zeros_like(policy_logprobs))
    per_token = per_entry.sum(-1)
    return torch.where(mask, per_token, torch.zeros_like(per_token)).sum()


def anchor_kl_batch_sum(batch, settings, state) -> torch.Tensor:
    """ASFT's extra term: lambda times the summed KL to the anchor."""
    return settings.kl_weight * anchor_kl_sum(batch.logprobs, batch.anchor, batch.mask, settings.kl_direction)
