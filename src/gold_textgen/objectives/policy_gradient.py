"""On-policy fine-tuning with REINFORCE and the task metric as sequence reward (the paper's MLE+PG and
GOLD+PG, Section 5.3 and the appendix "Details on On-Policy Experiments").

For S outputs y^s sampled from the current policy, with sequence rewards R_s (the task metric of each
sample against its reference) and a baseline b:

    loss = -(1/S) sum_s (R_s - b) sum_t log pi_theta(y^s_t | y^s_<t, x),

whose gradient is the REINFORCE estimate of the expected reward's gradient. The paper interleaves these
updates evenly with MLE updates on the references (to avoid degenerate solutions). b is a constant (the
paper searched {0, 0.01, 0.05, 0.1, 0.15}) or the mean reward of the last 100 steps minus a margin
({0, 0.05}).
"""

from __future__ import annotations

from collections import deque

import torch


def reinforce_loss_sum(
    sample_token_logprobs: torch.Tensor, sample_mask: torch.Tensor, rewards: torch.Tensor, baseline: float
) -> torch.Tensor:
    """sum_s -(R_s - b) sum_t log pi(y^s_t); divide by the number of samples S of the update.

    `sample_token_logprobs` [S, L]: log pi_theta of each sampled token (with gradient); `sample_mask` [S, L]
    True on the sampled tokens (EOS included, padding after it excluded); `rewards` [S], no gradient.
    """
    advantages = (rewards.detach() - baseline).to(sample_token_logprobs.dtype)
    sequence_logprobs = sample_token_logprobs.masked_fill(~sample_mask, 0.0).sum(-1)
    return -(advantages * sequence_logprobs).sum()


def is_policy_gradient_update(global_step: int) -> bool:
    """Updates alternate evenly: 0, 2, 4, ... learn from the references (MLE), 1, 3, 5, ... from samples."""
    return global_step % 2 == 1


class RewardBaseline:
    """b: a constant, or (with a `margin`) the mean reward of the last `window` policy-gradient steps minus
    the margin (the constant until the first step has a reward). Its history is kept in checkpoints."""

    def __init__(self, constant: float, margin: float | None = None, window: int = 100):
        self.constant = constant
        self.margin = margin
        self.history: deque[float] = deque(maxlen=window)

    @property
    def value(self) -> float:
        if self.margin is None or not self.history:
            return self.constant
        return sum(self.history) / len(self.history) - self.margin

    def record(self, mean_reward: float) -> None:
        self.history.append(float(mean_reward))

    def state_dict(self) -> dict:
        return {"history": list(self.history)}

    def load_state_dict(self, state: dict) -> None:
        self.history.clear()
        self.history.extend(state["history"])
