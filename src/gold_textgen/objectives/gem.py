"""GEM (Li et al., ICLR 2025, "Preserving Diversity in Supervised Fine-Tuning of Large Language Models"):
SFT as a game between the model and a detached "generator" distribution, which fits the references
without collapsing the model's distribution onto them (the diversity of its samples is kept). Per
reference token y_t, with l = log pi_theta(. | y_<t, x) over the vocabulary,

    L_t = -sum_v q(v) h(v) (l(y_t) - l(v)),   q = softmax(l / beta), detached,

h(v) = 1 (`h: linear`) or sigmoid((z_v - z_y) / 100) with z the logits (`h: log_sigmoid`), detached; the
loss is the mean of L_t over the real reference tokens. As the authors' code (liziniu/GEM, `gem_loss_func`
in utils/gem_loss.py, also shipped as a transformers `GEMTrainer`): weights and q under no_grad from the
logits, the log-softmax with gradient, beta 0.7 and h linear by default, no label smoothing. Log-softmax
and logits differ by one constant per position, so q and h are computed here from the log-probabilities
the trainer already has. With beta = 1 and h linear, L_t = NLL_t - H(pi_theta) in value: cross-entropy
minus the entropy it would otherwise drive down.
"""

from __future__ import annotations

import torch

H_FUNCTIONS = ("linear", "log_sigmoid")


def gem_sum(
    policy_logprobs: torch.Tensor, reference_logprobs: torch.Tensor, mask: torch.Tensor, beta: float = 0.7, h: str = "linear"
) -> torch.Tensor:
    """sum over real reference tokens of L_t. `policy_logprobs` [B, T, V] (log-softmax, with gradient);
    `reference_logprobs` [B, T] its entries at the reference tokens (with gradient); `mask` [B, T]."""
    if h not in H_FUNCTIONS:
        raise ValueError(f"h must be one of {H_FUNCTIONS}, got '{h}'")
    on_label = reference_logprobs.unsqueeze(-1)
    with torch.no_grad():
        q = torch.softmax(policy_logprobs / beta, dim=-1)
        h_values = torch.ones_like(q) if h == "linear" else torch.sigmoid(0.01 * (policy_logprobs - on_label))
    per_token = -(q * h_values * (on_label - policy_logprobs)).sum(-1)
    return torch.where(mask, per_token, torch.zeros_like(per_token)).sum()


def gem_batch_sum(batch, settings, state) -> torch.Tensor:
    return gem_sum(batch.logprobs, batch.reference, batch.mask, settings.beta, settings.h)
