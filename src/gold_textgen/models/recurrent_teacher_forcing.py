"""Teacher forcing of the recurrent copy models at the packed positions (packed_positions.py): the decoder
cell and the attention position by position over the rows still going, the readout's dropout drawn as over
the whole padded batch, and the loss."""

from __future__ import annotations

import torch

from .encoded_source import EncodedSource
from .packed_positions import PackedPositions


class PackedTeacherForcing:
    """Mixin for RecurrentSeq2SeqModel (its `recur`, `embed_words`, `dropout` and config)."""

    def teacher_forced_reads(
        self, encoded: EncodedSource, state: dict[str, torch.Tensor], decoder_input_ids: torch.Tensor, positions: PackedPositions
    ) -> tuple[dict[str, torch.Tensor], torch.Tensor | None]:
        """The decoder cell and attention, position by position over the rows still going (packed_positions.py):
        what the output layer reads at every packed position [P, ...], and the coverage losses [P] (None
        without coverage)."""
        sources = encoded.select(positions.order).prefixes(positions.active)
        state = {key: value.index_select(0, positions.order) for key, value in state.items()}
        # One position's words at a time: unbind's backward stacks their gradients, where indexing the
        # [B, T, E] embeddings at every position would write a zero-filled gradient of them all each time.
        words = self.embed_words(decoder_input_ids.index_select(0, positions.order)).unbind(1)
        steps, coverage = [], []
        for position, (active, source) in enumerate(zip(positions.active, sources, strict=True)):
            state = {key: value[:active] for key, value in state.items()}
            reads, state, coverage_loss = self.recur(words[position][:active], state, source)
            steps.append(reads)
            coverage.append(coverage_loss)
        reads = {key: torch.cat([step[key] for step in steps]) for key in steps[0]}
        return reads, torch.cat(coverage) if self.config.coverage else None

    def teacher_forced_loss(self, log_likelihoods: torch.Tensor, labels: torch.Tensor, coverage_losses: torch.Tensor | None):
        """The token-mean NLL of `labels` [B, T] from their log-likelihoods [B, T], plus the weighted coverage loss."""
        mask = labels.ne(-100)
        return (-log_likelihoods[mask].sum() + self.coverage_term(coverage_losses, mask)) / mask.sum().clamp_min(1)

    def coverage_term(self, coverage_losses: torch.Tensor | None, mask: torch.Tensor) -> torch.Tensor | float:
        """The weighted coverage loss summed over the label positions `mask` (0 without coverage): every
        objective adds it beside its own loss sum."""
        if coverage_losses is None or not self.config.coverage_loss_weight:
            return 0.0
        return self.config.coverage_loss_weight * coverage_losses[mask].sum()

    def readout_dropout(self, readout: torch.Tensor, positions: PackedPositions | None) -> torch.Tensor:
        """Dropout of the readout. At packed positions the mask is drawn for every position of the padded
        batch and read at those computed, so that training draws the random numbers it drew before
        positions were packed: the same models, to float tolerance."""
        if positions is None or not self.training or not self.config.dropout:
            return self.dropout(readout)
        return readout * self.dropout(readout.new_ones(positions.total, readout.shape[-1])).index_select(0, positions.flat)
