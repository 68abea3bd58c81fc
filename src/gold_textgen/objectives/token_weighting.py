"""Objectives after GOLD that re-weight each reference token's log-likelihood by a function of the
*current* policy's own probability of it, p_t = pi_theta(y_t | y_<t, x), detached. Each returns the
per-token weights [B, T] that `weighted_nll` multiplies into the NLL (returns are 1).

Read against GOLD: GOLD-delta's weight is max(u, pi_tilde(y_t)) with pi_tilde a *lagged* copy of the
policy, so DFT is GOLD-delta without the lag (k = 1) and without the floor (u = 0).
"""

from __future__ import annotations

import torch


def dft_weights(policy_token_logprobs: torch.Tensor) -> torch.Tensor:
    """DFT (Wu et al., 2025, "On the Generalization of SFT"): w_t = p_t, detached.

    As TRL's SFTTrainer with `SFTConfig(loss_type="dft")`: the trainer installs `dft_loss` as its
    `compute_loss_func` (trl/trainer/sft_trainer.py at commit f2cd577 of 2026-07: `SFTTrainer.__init__`,
    lines 1287-1297; `dft_loss`, lines 773-788; with the Liger kernel the same loss runs inside the fused
    kernel, `use_token_scaling`, line 1737). per_token_loss = -exp(logprobs).detach() * logprobs, summed
    over real tokens and divided by the tokens of the update (`num_items_in_batch`), as here.
    """
    return policy_token_logprobs.detach().exp()


def tailr_weights(policy_token_logprobs: torch.Tensor, gamma: float, min_weight: float) -> torch.Tensor:
    """TaiLr (Ji et al., ICLR 2023): w_t = clamp(p_t / (gamma + (1 - gamma) p_t), min_weight, 1), detached.

    As thu-coai/TaiLr fairseq/criterions/tailr.py, `tailr_loss` (lines 36-38): the weight is computed as
    exp(log p - log(gamma + (1 - gamma) p)) under no_grad and clamped to [density_min_weight, 1]; the loss
    is (1 - eps) * sum w_t nll_t + eps / V * smooth, the label smoothing left unweighted as here. gamma = 1
    gives DFT's p_t, gamma -> 0 plain MLE.
    """
    probs = policy_token_logprobs.detach().exp()
    ratio = (policy_token_logprobs.detach() - torch.log(gamma + (1.0 - gamma) * probs)).exp()
    return ratio.clamp(min=min_weight, max=1.0)


def mixce_weights(policy_token_logprobs: torch.Tensor, mixing_ratio: float) -> torch.Tensor:
    """MixCE (Zhang et al., ACL 2023), the token-level approximation its code trains with:
    w_t = eta + (1 - eta) p_t, detached, eta = `mixing_ratio` (eta = 1: MLE).

    As bloomberg/MixCE-acl2023 gpt2.py, `GPT2MIXModel.forward` (lines 131-145): q = exp(-mle_loss) under
    no_grad, loss = eta * mle_loss + (1 - eta) * q * mle_loss, then the token mean over the mask. The
    paper's sequence-level reverse cross-entropy is approximated by this self-weighting; that
    approximation is what is compared here.
    """
    return mixing_ratio + (1.0 - mixing_ratio) * policy_token_logprobs.detach().exp()


def dft_batch_weights(batch, settings, state) -> torch.Tensor:
    return dft_weights(batch.own)


def tailr_batch_weights(batch, settings, state) -> torch.Tensor:
    return tailr_weights(batch.own, settings.density_ratio_threshold, settings.min_weight)


def mixce_batch_weights(batch, settings, state) -> torch.Tensor:
    return mixce_weights(batch.own, settings.mixing_ratio)
