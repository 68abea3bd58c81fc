"""The loss every objective of this grid shares: reference tokens' NLL, each weighted by a detached
per-token factor (GOLD: w_t Q_t; others a function of the policy's own probability, or 0 or 1 per sequence;
each loss's factor: objectives/table.py), plus unweighted label smoothing; summed, to be divided by the reference
tokens of the whole update. An objective is thus fully described by its weights, which makes the objectives
comparable on equal terms: same normalisation, same smoothing, same batches."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class LossParts:
    """Sums over real tokens; divide by the token count of the whole (accumulated) batch."""

    loss_sum: torch.Tensor  # sum_t [(1 - eps) w_t Q_t nll_t + eps * smooth_t]; carries the gradient
    nll_sum: torch.Tensor  # sum_t nll_t, unweighted and detached (for logging)
    num_tokens: torch.Tensor


def weighted_nll(
    logprobs: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor, returns: torch.Tensor, label_smoothing: float = 0.0
) -> LossParts:
    """The weighted loss -(1/N) sum_t w_t Q_t log pi_theta(y_t), as sums (GOLD's form; other objectives pass
    their weights as `weights` and ones as `returns`).

    `logprobs` [B, T, V]: log-softmax of the policy being trained. `labels` [B, T]: reference ids, -100
    at padding. `weights` and `returns` [B, T] are detached here whatever the caller passes: no gradient
    flows into them. Label smoothing `eps` adds eps * mean_v(-log pi(v)) per token, unweighted, as in the
    authors' code; with w = Q = 1 the whole is fairseq's label-smoothed cross-entropy.
    """
    reference = reference_logprobs(logprobs, labels)
    return weighted_reference_nll(reference, labels, weights, returns, label_smoothing, logprobs)


def weighted_reference_nll(
    reference: torch.Tensor,
    labels: torch.Tensor,
    weights: torch.Tensor,
    returns: torch.Tensor,
    label_smoothing: float = 0.0,
    logprobs: torch.Tensor | None = None,
) -> LossParts:
    """weighted_nll from the reference tokens' log-probs `reference` [B, T]: the whole distribution
    `logprobs` [B, T, V] is read only when `label_smoothing` > 0, so that a model which gives its labels'
    log-probs without the table (the recurrent copy models) has its gradient skip it."""
    mask = labels.ne(-100)
    nll = -reference
    scale = (weights.detach() * returns.detach()).to(nll.dtype)
    per_token = (1.0 - label_smoothing) * scale * nll
    if label_smoothing > 0:
        if logprobs is None:
            raise ValueError("label smoothing needs the whole distribution: pass `logprobs`")
        per_token = per_token + label_smoothing * (-logprobs.mean(dim=-1))
    zero = torch.zeros((), dtype=nll.dtype, device=nll.device)
    return LossParts(
        loss_sum=torch.where(mask, per_token, zero).sum(),
        nll_sum=torch.where(mask, nll, zero).sum().detach(),
        num_tokens=mask.sum(),
    )


def reference_logprobs(logprobs: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """log pi(y_t) of each reference token, [B, T] (0 at padding), from log-softmax outputs [B, T, V]."""
    gathered = logprobs.gather(-1, labels.clamp_min(0).unsqueeze(-1)).squeeze(-1)
    return gathered.masked_fill(labels.eq(-100), 0.0)


def unit_weights(batch, settings, state) -> torch.Tensor:
    """Weight 1 on every reference token: plain NLL (the control), and the policy gradient's reference updates."""
    return torch.ones_like(batch.own)
