"""One training step's loss on a batch of references, from the policy's log-probabilities (`TokenBatch`):
the helpers' log-probabilities added, a packed batch read one example per row, the objective's terms, the
update's token mean (`loss_step`). The workflow's trainer (fine_tune_trainer.py), ObjectiveSFTTrainer
(sft_trainer.py) and the library loss for any Trainer (trainer_losses.py) all call it, so that they cannot
drift apart; each runs the policy's forward pass its own way (a Seq2SeqTrainer's, TRL's, a Trainer's) and
scales for data parallelism as its Trainer needs (`for_gradient_averaging`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ..objectives.gold import after_eos_term, delta_returns, per_token_rewards, windowed_returns
from ..objectives.table import LOSSES, TokenBatch
from ..objectives.weighted_nll import LossParts, weighted_reference_nll
from .objective_settings import ObjectiveSettings
from .packed_examples import one_example_per_row


@dataclass
class ObjectiveTerms:
    loss_sum: torch.Tensor  # summed over the batch's reference tokens, with gradient
    parts: LossParts  # the weighted NLL's sums (NLL, token count) for the log
    weights: torch.Tensor  # [B, T] the loss's per-token weights (detached)
    returns: torch.Tensor  # [B, T] GOLD's returns; ones for the other objectives
    terms: torch.Tensor | None  # [B, T] GOLD-p/s's reward terms before the window sum; None otherwise


def objective_terms(batch: TokenBatch, labels: torch.Tensor, settings: ObjectiveSettings, state: Any) -> ObjectiveTerms:
    """The loss `settings.loss` on `batch` (`labels`: the reference ids, -100 where there is none);
    `state` holds what a loss keeps across steps (loss truncation's cut-off: `state.truncation`)."""
    entry = LOSSES[settings.loss]
    weights = entry.weights(batch, settings, state)
    terms = None
    if settings.uses_gold_returns:
        terms = per_token_rewards(batch.mle.exp(), settings.reward, settings.floor, settings.baseline, settings.horizon)
        past_eos = after_eos_term(settings.baseline, settings.horizon)
        returns = windowed_returns(terms, batch.mask, settings.horizon, settings.gamma, past_eos)
    else:
        returns = delta_returns(batch.mask)  # GOLD-delta's Q_t = 1; the other objectives have no return
    # the NLL from the reference tokens' log-probs; the whole distribution only for label smoothing
    parts = weighted_reference_nll(batch.reference, labels, weights, returns, settings.label_smoothing, batch.logprobs)
    if entry.extra is None:
        return ObjectiveTerms(parts.loss_sum, parts, weights, returns, terms)
    # the extra term is part of the loss that label smoothing scales, as the weighted NLL is: (1 - eps) x loss + eps x smoothing
    extra = (1.0 - settings.label_smoothing) * entry.extra(batch, settings, state)
    return ObjectiveTerms(parts.loss_sum + extra, parts, weights, returns, terms)


@dataclass
class StepLoss:
    loss: torch.Tensor  # the micro-batch's share of the update's token mean, with gradient
    terms: ObjectiveTerms  # what the step's statistics are read from
    mask: torch.Tensor  # [B, T] the reference tokens of `terms` (one example per row)


def loss_step(
    batch: TokenBatch,
    labels: torch.Tensor,
    settings: ObjectiveSettings,
    state: Any,
    num_items_in_batch,
    *,
    fill_helpers: Callable[[TokenBatch], None] | None = None,
    model_term: Callable[[torch.Tensor], torch.Tensor | float] | None = None,
    inputs: dict | None = None,
    causal: bool = False,
) -> StepLoss:
    """The loss of one micro-batch: `batch` holds the policy's log-probabilities of `labels`;
    `fill_helpers(batch)` adds the helper models' (pi_tilde, the frozen model's rewards or distribution,
    read on the policy's inputs) where the objective needs them; `model_term(mask)` is a term the model
    itself adds to every objective (the pointer-generator's coverage loss), summed over the tokens of
    `mask`; a packed or padding-free batch (`inputs`' positions or sequence ids, a `causal` LM's) is read
    one example per row, so that no return or sequence term crosses examples; `state` holds what a loss
    keeps across steps (the helpers: loss truncation's cut-off)."""
    if fill_helpers is not None and settings.needs:
        fill_helpers(batch)
    extra = model_term(batch.mask) if model_term is not None else 0.0
    batch, labels = one_example_per_row(batch, labels, inputs, causal)
    terms = objective_terms(batch, labels, settings, state)
    return StepLoss(update_token_mean(terms.loss_sum + extra, num_items_in_batch, terms.parts.num_tokens), terms, batch.mask)


def update_token_mean(loss_sum: torch.Tensor, num_items_in_batch, num_tokens) -> torch.Tensor:
    """A micro-batch's share of the update's token mean: its summed loss over the reference tokens of the
    whole update (`num_items_in_batch`, every micro-batch and process, as the Trainer counts them), or over
    its own tokens where the Trainer counts none."""
    return loss_sum / (num_items_in_batch if num_items_in_batch is not None else num_tokens)


def for_gradient_averaging(trainer, loss: torch.Tensor, num_items_in_batch) -> torch.Tensor:
    """`loss` times the data-parallel processes when it is divided by every process's tokens, since DDP
    averages the gradients over processes (as transformers' `Trainer.compute_loss` scales its own loss;
    tensor-parallel ranks share one batch). The workflow's trainer and ObjectiveSFTTrainer both call this."""
    if trainer.args.average_tokens_across_devices and num_items_in_batch is not None:
        return loss * (trainer.accelerator.num_processes // trainer.get_tp_size())
    return loss
