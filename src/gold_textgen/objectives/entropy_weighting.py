"""EAFT, entropy-adaptive fine-tuning (2026, "Entropy-Adaptive Fine-Tuning: Resolving Confident Conflicts
to Mitigate Forgetting"): each token's NLL weighted by the policy's own uncertainty at that position,

    w_t = (H_k(pi_theta(. | y_<t, x)) / normaliser)^alpha,   stop-gradient,

H_k the entropy of the softmax over the k largest logits (an approximation of the full entropy). Tokens the
model is sure about (low entropy), right or wrong, are learned less; that is the paper's answer to the
"confident conflicts" that make SFT forget. As LLaMA-Factory src/llamafactory/train/trainer_utils.py,
`eaft_loss_func` / `_eaft_cross_entropy`: top-20 logits of the detached output, their log-softmax,
entropy, divided by 3.0 (about ln 20, the largest entropy 20 outcomes can have), to the power alpha
(default 1); the weighted token losses summed and divided by the tokens of the update.
"""

from __future__ import annotations

import torch


def entropy_weights(policy_logprobs: torch.Tensor, top_k: int = 20, normaliser: float = 3.0, alpha: float = 1.0) -> torch.Tensor:
    """[B, T] weights (detached) from the policy's log-probabilities (or logits: the softmax over the top k
    is the same) [B, T, V]."""
    top = policy_logprobs.detach().float().topk(min(top_k, policy_logprobs.size(-1)), dim=-1).values
    top = top.masked_fill(torch.isneginf(top), torch.finfo(top.dtype).min)  # a copy model's unused placeholders
    logprobs = torch.log_softmax(top, dim=-1)
    entropy = -(logprobs.exp() * logprobs).sum(-1)
    return (entropy / normaliser).pow(alpha)


def entropy_batch_weights(batch, settings, state) -> torch.Tensor:
    return entropy_weights(batch.logprobs, settings.top_k, settings.normaliser, settings.alpha)
