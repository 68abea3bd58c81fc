"""The probability-based objectives of Li et al. 2025 ("Beyond Log Likelihood: Probability-Based
Objectives for Supervised Fine-Tuning across the Model Capability Continuum"):

    L = (1/N) sum_t f(p_t),   f(p) = (1 - p^alpha) / alpha,   p_t = pi_theta(y_t | y_<t, x)  (with gradient).

alpha -> 0 gives -log p (MLE); alpha = 1 gives 1 - p, whose gradient -p grad log p is DFT's. The
gradient is -p^alpha grad log p: NLL reweighted by p^alpha. As GaotangLi/Beyond-Log-Likelihood
main_verl/trainer/fsdp_sft_trainer.py (lines 372-411): "GeneralFamily-alpha" is -(exp(alpha log p) - 1)
/ alpha; the thresholded variants keep only the tokens with p >= threshold ("OnlyTopP") or p <=
threshold ("OnlyBottomP"), with f(p) = 1 - p, the mask computed from the current p. Here the threshold may
be combined with any alpha (alpha = 1 is the reference's).
"""

from __future__ import annotations

import torch

THRESHOLD_SIDES = ("above", "below")


def probability_family_sum(
    policy_token_logprobs: torch.Tensor, mask: torch.Tensor, alpha: float, threshold: float | None = None, side: str = "above"
) -> torch.Tensor:
    """sum over the real tokens of (1 - p^alpha) / alpha; `threshold` keeps the tokens whose p is at least
    (`side` "above") or at most ("below") it, and the sum is then that over the kept tokens times (real
    tokens / kept tokens), so that dividing it by the real tokens gives the mean over the kept ones."""
    if alpha <= 0:
        raise ValueError(f"alpha must be positive, got {alpha}")
    if side not in THRESHOLD_SIDES:
        raise ValueError(f"side must be one of {THRESHOLD_SIDES}, got '{side}'")
    keep = mask
    if threshold is not None:
        probs = policy_token_logprobs.detach().exp()
        keep = mask & (probs >= threshold if side == "above" else probs <= threshold)
    per_token = (1.0 - (alpha * policy_token_logprobs).exp()) / alpha
    kept_sum = torch.where(keep, per_token, torch.zeros_like(per_token)).sum()
    if threshold is None:
        return kept_sum
    return kept_sum * mask.sum() / keep.sum().clamp_min(1)  # no token kept: the sum is 0 either way


def probability_family_batch_sum(batch, settings, state) -> torch.Tensor:
    return probability_family_sum(batch.reference, batch.mask, settings.alpha, settings.threshold, settings.threshold_side)
