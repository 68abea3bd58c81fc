"""What the recurrent models' encoder hands every decoder step (recurrent.py), one row per source."""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch


@dataclass
class EncodedSource:
    """What every decoder step reads: encoder outputs [N, S, H], their attention keys [N, S, A] (None where
    the reader projects them itself), the valid positions [N, S], the source ids [N, S] the copy mass goes to
    and, for each position, the first position that holds the same id [N, S] (copy_attention.first_occurrences)."""

    outputs: torch.Tensor
    keys: torch.Tensor | None
    valid: torch.Tensor
    source_ids: torch.Tensor
    first_position: torch.Tensor

    def select(self, index: torch.Tensor) -> EncodedSource:
        return EncodedSource(*(None if part is None else part.index_select(0, index) for part in self.parts()))

    def prefixes(self, counts: list[int]) -> list[EncodedSource]:
        """The first n sources (views, no copy) for every n of `counts` (teacher forcing's rows still going
        at each position), the gradients of all of them added into one buffer (`RowPrefixes`)."""
        columns = [RowPrefixes.apply(tensor, counts) if tensor.requires_grad else [tensor[:n] for n in counts] for tensor in self.parts()]
        return [EncodedSource(*parts) for parts in zip(*columns, strict=True)]

    def parts(self) -> list[torch.Tensor]:
        return [getattr(self, field.name) for field in fields(self)]


class RowPrefixes(torch.autograd.Function):
    """tensor[:n] for each n of `counts`, with one backward that adds each prefix's gradient into one
    buffer in place, the last prefix's first as the autograd engine would add them. Slicing in turn gives every
    prefix a backward of its own that writes a zero-filled gradient of the whole tensor, then adds it:
    three passes over the encoder's [N, S, A] keys per decoder step."""

    @staticmethod
    def forward(ctx, tensor: torch.Tensor, counts: list[int]):
        ctx.set_materialize_grads(False)
        ctx.shape, ctx.counts = tensor.shape, counts
        return tuple(tensor[:n] for n in counts)

    @staticmethod
    def backward(ctx, *grads):
        total = None
        for rows, grad in reversed(list(zip(ctx.counts, grads, strict=True))):
            if grad is None:
                continue
            if total is None:
                total = grad.new_zeros(ctx.shape)
            total[:rows] += grad
        return total, None
