"""The policy's log-probabilities of the reference tokens without a [B, T, V] table where the model gives
them: the recurrent copy models, called with labels, return them (`label_log_likelihoods`) from the output
layer's rows at the labels, with a gradient that skips the table, and their logits are log-probabilities
already. Other models' come from the log-softmax of their logits, as always."""

from __future__ import annotations

import torch

from ..models.input_contract import WITHOUT_TABLE, reads_labels_cheaply
from ..objectives.table import TokenBatch
from ..objectives.weighted_nll import reference_logprobs


def with_labels_if_read_cheaply(model: torch.nn.Module, inputs: dict, labels: torch.Tensor, table: bool = True) -> dict:
    """The forward's inputs: `inputs`, plus the labels for a model that reads them cheaply (its built-in
    loss, computed from the same log-probabilities, costs a sum); without the [B, T, V] table where the
    caller does not read it (`table` False), the token statistics coming instead."""
    if not reads_labels_cheaply(model):
        return inputs
    if table:
        return {**inputs, "labels": labels}
    return {**inputs, "labels": labels, **WITHOUT_TABLE}


def policy_token_batch(outputs, labels: torch.Tensor) -> TokenBatch:
    """The TokenBatch of the policy's `outputs` for `labels` (before the helpers fill theirs)."""
    given = getattr(outputs, "label_log_likelihoods", None)
    if given is None:
        logprobs = torch.log_softmax(outputs.logits.float(), dim=-1)
        return TokenBatch(logprobs=logprobs, reference=reference_logprobs(logprobs, labels), mask=labels.ne(-100))
    # Log-probabilities already: the table is read only by an objective of the whole distribution (or label
    # smoothing), the reference tokens' log-probs and their gradient come without it; a forward asked for
    # no table gives none.
    table = None if outputs.logits is None else outputs.logits.float()
    return TokenBatch(logprobs=table, reference=given.float(), mask=labels.ne(-100))


def helper_reference_logprobs(model: torch.nn.Module, inputs: dict, labels: torch.Tensor, logprobs) -> torch.Tensor:
    """A helper model's log-probabilities of the reference tokens [B, T] (0 at padding); `logprobs(model)`
    gives its whole log-softmax where the model does not give them."""
    if reads_labels_cheaply(model):
        return model(**inputs, labels=labels, return_logits=False).label_log_likelihoods.float()
    return reference_logprobs(logprobs(model), labels)
