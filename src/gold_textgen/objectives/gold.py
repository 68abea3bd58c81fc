"""GOLD's objectives as pure functions on tensors (no model calls): importance weights, per-token
rewards, windowed returns and the weighted loss.

Shapes: B sequences, T target positions (the references, right-padded), V vocabulary entries. `mask` is a
bool [B, T] that is True on real target tokens (EOS included) and False on padding.

The gradient of the loss is the paper's off-policy policy gradient (Eq. 4, with the per-action
importance-weight approximation and the empirical behaviour policy):

    grad = -(1/N) sum_t w_t Q_t grad log pi_theta(y_t | y_<t, x),   N = number of real tokens,

with w_t and Q_t treated as constants (computed without gradient).
"""

from __future__ import annotations

import torch

REWARD_KINDS = ("delta", "p", "s")


def importance_weights(lagged_token_logprobs: torch.Tensor, min_weight: float) -> torch.Tensor:
    """w_t = max(u, pi_tilde(y_t | y_<t, x)), per token: the per-action approximation of the trajectory
    ratio, with the unknown behaviour policy taken as uniform over the demonstrations (a constant).

    `lagged_token_logprobs` [B, T]: log pi_tilde of each reference token under the lagged policy.
    Returns [B, T], detached. u (`min_weight`) keeps tokens the policy finds unlikely from vanishing.
    """
    return lagged_token_logprobs.detach().exp().clamp(min=min_weight)


def per_token_rewards(reward_token_probs: torch.Tensor, kind: str, floor: float, baseline: float, horizon: int) -> torch.Tensor:
    """The floored reward terms g_t that returns sum up, [B, T].

    * `p` (GOLD-p): g_t = max(log p_MLE(y_t) - b / (H + 1), c)
    * `s` (GOLD-s): g_t = max(p_MLE(y_t) - b / (H + 1), c)
    * `delta` (GOLD-delta): not a per-token reward; see `returns` (Q_t = 1).

    Baseline convention: `baseline` b is the paper's **return** baseline (GOLD-p: b = -60). A return sums
    H + 1 terms (the current token and the next H = `horizon`), so each term carries b / (H + 1); with the
    default H = 5 that is the authors' code's per-term -10. While no floor is active the two conventions
    give the same return: sum_j (log p_j - b / (H + 1)) = sum_j log p_j - b. Near EOS the missing window
    slots still carry their share (`after_eos_term`), so b is subtracted once from every return.
    """
    if kind not in ("p", "s"):
        raise ValueError(f"per-token rewards exist for kinds 'p' and 's', not '{kind}'")
    probs = reward_token_probs.detach()
    values = torch.log(probs.clamp_min(1e-10)) if kind == "p" else probs
    return (values - baseline / (horizon + 1)).clamp(min=floor)


def windowed_returns(rewards: torch.Tensor, mask: torch.Tensor, horizon: int, gamma: float, after_eos: float = 0.0) -> torch.Tensor:
    """Q_t = sum_{j=0..H} gamma^j g_{t+j}, [B, T]; `after_eos` is the term of a window slot past EOS.

    After-EOS rule: the episode ends with EOS, so a window slot past a sequence's last real token has no
    reward of its own, but the return baseline is part of every return: such a slot carries only its
    share of the baseline, `after_eos = -b / (H + 1)` (see `after_eos_term`; GOLD-p with b = -60: +10,
    GOLD-s with b = 0: 0). Every return then subtracts b exactly once, as in the paper's formula, and a
    token's return depends only on its own sequence, never on how long the other sequences in the batch
    are (the authors' code reads padding or a fill value there, which differs between the longest and the
    other sequences of a batch). Returns at padding positions are 0.
    """
    real = mask.to(rewards.dtype)
    gated = rewards * real + after_eos * (1.0 - real)
    # Slots past the end of the tensor are past EOS for every sequence.
    padded = torch.cat([gated, gated.new_full((gated.shape[0], horizon), after_eos)], dim=1)
    length = gated.shape[1]
    returns = torch.zeros_like(gated)
    for offset in range(horizon + 1):
        returns += (gamma**offset) * padded[:, offset : offset + length]
    return returns * real


def after_eos_term(baseline: float, horizon: int) -> float:
    """The reward term of a window slot past EOS: no reward, only the slot's share -b / (H + 1) of the
    return baseline (a real token's term is max(f(p_MLE) - b / (H + 1), c); see `per_token_rewards`)."""
    return -baseline / (horizon + 1)


def delta_returns(mask: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """GOLD-delta: reward 1 at the end of every demonstration and 0 elsewhere; with gamma = 1 every
    reference token's return is 1, so the objective reduces to the importance weights."""
    return mask.to(dtype)


def gold_batch_weights(batch, settings, state) -> torch.Tensor:
    """GOLD's row of the catalog: w_t from pi_tilde, or from the current policy when the lag is off."""
    return importance_weights(batch.own if batch.lagged is None else batch.lagged, settings.min_weight)
