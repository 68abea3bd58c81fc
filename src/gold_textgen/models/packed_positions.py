"""The target positions that teacher forcing of the recurrent models computes: those a loss can read.

A batch of references is padded to its longest: on NQG's questions (12 words on average, 22 for the longest
of a batch of 32) almost half of a [B, T] batch is padding. The decoder cell, the attention and the output
layer of a padded position compute numbers that every loss masks, so teacher forcing skips them: the rows
are ordered by length, longest first, and position t runs the rows still going, a prefix of that order
(pack_padded_sequence's layout, for a decoder whose step is not a single cuDNN kernel). The positions it
computes are "packed": time-major, the n_0 rows of position 0, then the n_1 of position 1, and so on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class PackedPositions:
    """`order` [B]: rows by decreasing length; `active[t]`: rows still going at position t (the first
    active[t] of `order`); `rows` and `flat` [P]: each packed position's row and its index row * width + t
    in the flattened [B, T] batch; `skipped`: the flattened indices of the positions not computed."""

    batch: int
    width: int
    order: torch.Tensor
    active: list[int]
    rows: torch.Tensor
    flat: torch.Tensor
    skipped: torch.Tensor

    @classmethod
    def of(cls, labels: torch.Tensor | None, decoder_input_ids: torch.Tensor, pad_token_id: int) -> PackedPositions:
        """Each row runs up to its last label (-100 is no label); without labels, up to its last decoder
        input that is not padding (the position after the reference's end included: harmless), at least
        one position."""
        width = decoder_input_ids.shape[1]
        positions = torch.arange(width, device=decoder_input_ids.device)
        if labels is not None:
            lengths = (labels.ne(-100) * (positions + 1)).amax(-1)
        else:
            lengths = (decoder_input_ids.ne(pad_token_id) * (positions + 1)).amax(-1).clamp_min(1)
        return cls.of_lengths(lengths, width)

    @classmethod
    def of_lengths(cls, lengths: torch.Tensor, width: int) -> PackedPositions:
        """Rows of `lengths` [B] positions each, in a batch padded to `width` (the encoder's sources too)."""
        batch = lengths.shape[0]
        positions = torch.arange(width, device=lengths.device)
        order = torch.argsort(lengths, descending=True, stable=True)
        each = lengths.tolist()
        active = [sum(length > t for length in each) for t in range(max(each, default=0))]
        rows = torch.cat([order[:count] for count in active]) if active else order[:0]
        steps = torch.cat([positions.new_full((count,), t) for t, count in enumerate(active)]) if active else order[:0]
        flat = rows * width + steps
        computed = torch.zeros(batch * width, dtype=torch.bool, device=flat.device).index_fill_(0, flat, True)
        return cls(batch, width, order, active, rows, flat, computed.logical_not().nonzero().squeeze(1))

    def steps(self) -> list[tuple[slice, int, slice | None]]:
        """For each position t: its packed rows, their count, and the same rows at position t - 1 (None at
        the first): what a recurrence over the packed positions reads and writes at each step."""
        steps, offset, previous = [], 0, None
        for count in self.active:
            steps.append((slice(offset, offset + count), count, None if previous is None else slice(previous, previous + count)))
            previous, offset = offset, offset + count
        return steps

    @property
    def total(self) -> int:
        """B * T: every position of the padded batch."""
        return self.batch * self.width

    def unpack(self, packed: torch.Tensor, fill: float = 0.0) -> torch.Tensor:
        """[P, ...] -> [B, T, ...], `fill` at the positions not computed (differentiable in `packed`). Each
        position is written once: a [B, T, V] table is the largest tensor of a step."""
        full = packed.new_empty((self.total, *packed.shape[1:])).index_fill_(0, self.skipped, fill)
        return full.index_copy_(0, self.flat, packed).view(self.batch, self.width, *packed.shape[1:])

    def take(self, full: torch.Tensor) -> torch.Tensor:
        """[B, T, ...] -> [P, ...]: the packed positions of a batch-shaped tensor."""
        return full.flatten(0, 1).index_select(0, self.flat)


def uniform_log_probability(size: int) -> float:
    """The log-probability every word gets at a position not computed: a finite, normalised row, which
    log_softmax leaves as it is."""
    return -math.log(size)
