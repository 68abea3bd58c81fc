"""Teacher forcing of the recurrent copy models at the packed positions (packed_positions.py): the decoder
cell and the attention position by position over the rows still going, the readout's dropout drawn as over
the whole padded batch, and the loss."""

from __future__ import annotations

import torch
from torch.nn import functional

from .attentive_gru import AttentiveGruRecurrence
from .encoded_source import EncodedSource
from .label_nll import token_mean
from .packed_positions import PackedPositions


class PackedTeacherForcing:
    """Mixin for RecurrentSeq2SeqModel (its `recur`, `embed_words`, `dropout` and config)."""

    def teacher_forced_reads(
        self, encoded: EncodedSource, state: dict[str, torch.Tensor], decoder_input_ids: torch.Tensor, positions: PackedPositions
    ) -> tuple[dict[str, torch.Tensor], torch.Tensor | None]:
        """The decoder cell and attention, position by position over the rows still going (packed_positions.py):
        what the output layer reads at every packed position [P, ...], and the coverage losses [P] (None
        without coverage)."""
        if self.runs_attentive_gru(decoder_input_ids):
            return self.attentive_gru_reads(encoded.select(positions.order), state, decoder_input_ids, positions), None
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

    def runs_attentive_gru(self, decoder_input_ids: torch.Tensor) -> bool:
        """NQG++ on a CPU: the same numbers as the loop below, faster (attentive_gru.py)."""
        return not (self.config.uses_lstm or decoder_input_ids.is_cuda)

    def attentive_gru_reads(
        self, sources: EncodedSource, state: dict[str, torch.Tensor], decoder_input_ids: torch.Tensor, positions: PackedPositions
    ) -> dict[str, torch.Tensor]:
        """`teacher_forced_reads` of NQG++ (a GRU cell, attention without coverage) through
        attentive_gru.py, `sources` in the packed rows' order (their keys, if any, unread: attentive_gru.py
        projects the valid positions alone)."""
        words = self.embed_words(decoder_input_ids.flatten().index_select(0, positions.flat))
        cell, width = self.decoder_cell, self.config.embedding_dim
        hidden, contexts, attention = AttentiveGruRecurrence.apply(
            functional.linear(words, cell.weight_ih[:, :width], cell.bias_ih),
            *(state[key].index_select(0, positions.order) for key in ("h", "context")),
            self.attention.project_keys(sources.outputs[sources.valid]), sources.outputs, sources.valid,
            cell.weight_ih[:, width:], cell.weight_hh, cell.bias_hh, self.attention.query.weight, self.attention.energy.weight.view(-1),
            positions,
        )  # fmt: skip
        return {
            "attention": attention,
            "readout": torch.cat([words, contexts, hidden], dim=-1),
            "switch": torch.cat([hidden, contexts], dim=-1),
        }

    def teacher_forced_loss(self, log_likelihoods: torch.Tensor, labels: torch.Tensor, coverage_losses: torch.Tensor | None):
        """The token-mean NLL of `labels` [B, T] from their log-likelihoods [B, T], plus the weighted coverage
        loss (per token too)."""
        mask = labels.ne(-100)
        return token_mean(-log_likelihoods, labels) + self.coverage_term(coverage_losses, mask) / mask.sum().clamp_min(1)

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
