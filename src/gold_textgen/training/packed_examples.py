"""Packed and padding-free batches laid out one example per row before an objective reads them.

TRL's packing and padding-free collators (and transformers' `DataCollatorWithFlattening`) put several
examples in one row and mark where each starts: `position_ids` restart at 0, `seq_idx` counts the examples,
`cu_seq_lens_q` holds their offsets. The model's attention reads these marks, but an objective that looks
past the current token reads the row by position: GOLD-p/s's returns sum the rewards of the next H tokens,
loss truncation and iw-SFT a whole sequence's log-probs. On a packed row those would run into the next,
unrelated example. So the objective gets the batch re-laid out as the unpacked batch would be, each
example's positions (prompt included) in a row of its own from column 0, padded at the right; every loss
then equals the unpacked batch's, its gradient flowing back through the gather to the packed logits.
"""

from __future__ import annotations

import dataclasses

import torch

from ..objectives.table import TokenBatch


def example_index(inputs: dict, shape: torch.Size, causal: bool) -> torch.Tensor | None:
    """Which example of its row each label position belongs to, [B, T] (counted from 0 within a row), from
    the batch's marks; None for a batch without them. For a causal LM label t is the token at t + 1."""
    if inputs.get("seq_idx") is not None:
        index = inputs["seq_idx"].long()
    elif inputs.get("position_ids") is not None:
        index = inputs["position_ids"].eq(0).long().cumsum(-1)
    elif inputs.get("cu_seq_lens_q") is not None:  # one flattened row: the examples' start offsets
        starts = inputs["cu_seq_lens_q"].long()
        width = shape[-1] + (1 if causal else 0)
        index = torch.searchsorted(starts, torch.arange(width, device=starts.device), right=True)[None]
    else:
        return None
    if index.dim() == 1:
        index = index[None]
    if causal:
        index = index[:, 1:]
    return index.expand(shape)


class ExampleLayout:
    """Where each example of a packed batch goes: row `rows[n, l]`, column `columns[n, l]` of the packed
    batch fills slot l of example n; `filled` is False on the padding after an example's last position."""

    def __init__(self, examples: torch.Tensor, labels: torch.Tensor):
        batch, width = labels.shape
        key = examples + torch.arange(batch, device=labels.device)[:, None] * (int(examples.max()) + 1)
        kept = torch.unique(key[labels.ne(-100)])  # an example without a label (padding, an empty one) is dropped
        member = torch.isin(key, kept)
        number = torch.searchsorted(kept, key).clamp(max=len(kept) - 1)
        column = torch.arange(width, device=labels.device).expand(batch, width)
        first = torch.full((len(kept),), width, device=labels.device).scatter_reduce(0, number[member], column[member], "amin")
        slot = column - first[number]
        length = int(slot[member].max()) + 1
        self.rows = torch.zeros(len(kept), length, dtype=torch.long, device=labels.device)
        self.columns = torch.zeros_like(self.rows)
        self.filled = torch.zeros(len(kept), length, dtype=torch.bool, device=labels.device)
        rows = torch.arange(batch, device=labels.device)[:, None].expand(batch, width)
        target = (number[member], slot[member])
        self.rows[target], self.columns[target], self.filled[target] = rows[member], column[member], True

    def take(self, tensor: torch.Tensor | None, fill: float | int = 0) -> torch.Tensor | None:
        """`tensor` [B, T, ...] as [N, L, ...], `fill` on the padding slots."""
        if tensor is None:
            return None
        taken = tensor[self.rows, self.columns]
        filled = self.filled.view(*self.filled.shape, *([1] * (tensor.dim() - 2)))
        return torch.where(filled, taken, torch.as_tensor(fill, dtype=tensor.dtype, device=tensor.device))


def several_examples_per_row(examples: torch.Tensor, labels: torch.Tensor) -> bool:
    """Whether some row holds the labels of two or more examples."""
    real = labels.ne(-100)
    largest = torch.where(real, examples, examples.min() - 1).amax(-1)
    smallest = torch.where(real, examples, examples.max() + 1).amin(-1)
    return bool((real.any(-1) & largest.ne(smallest)).any())


def one_example_per_row(batch: TokenBatch, labels: torch.Tensor, inputs: dict | None, causal: bool) -> tuple[TokenBatch, torch.Tensor]:
    """`batch` and `labels` with one example per row (unchanged when no row holds two)."""
    examples = example_index(inputs or {}, labels.shape, causal)
    if examples is None or not several_examples_per_row(examples, labels):
        return batch, labels
    layout = ExampleLayout(examples, labels)
    fields = {field.name: layout.take(getattr(batch, field.name)) for field in dataclasses.fields(batch) if field.name != "mask"}
    unpacked = layout.take(labels, fill=-100)
    return TokenBatch(**fields, mask=unpacked.ne(-100)), unpacked
