"""What the recurrent models' encoder hands every decoder step (recurrent.py), one row per source."""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch


@dataclass
class EncodedSource:
    """What every decoder step reads: encoder outputs [N, S, H], their attention keys [N, S, A], the valid
    positions [N, S], the source ids [N, S] the copy mass goes to and, for each position, the first position
    that holds the same id [N, S] (copy_attention.first_occurrences)."""

    outputs: torch.Tensor
    keys: torch.Tensor
    valid: torch.Tensor
    source_ids: torch.Tensor
    first_position: torch.Tensor

    def select(self, index: torch.Tensor) -> EncodedSource:
        return EncodedSource(*(getattr(self, field.name).index_select(0, index) for field in fields(self)))

    def prefix(self, rows: int) -> EncodedSource:
        """The first `rows` sources (views, no copy)."""
        return EncodedSource(*(getattr(self, field.name)[:rows] for field in fields(self)))
