"""Teacher-forcing inputs from labels, for the models of this package that transformers does not ship
(the recurrent copy models, the causal-LM wrapper): the decoder reads the start token, then the
reference shifted right by one, with padding where the labels have -100."""

from __future__ import annotations

import torch


class ShiftedLabels:
    """Mixin for a PreTrainedModel whose config has `decoder_start_token_id` and `pad_token_id`."""

    def prepare_decoder_input_ids_from_labels(self, labels: torch.Tensor) -> torch.Tensor:
        """What DataCollatorForSeq2Seq calls to put decoder inputs in every batch (as for BART)."""
        return self.shift_right(labels)

    def shift_right(self, labels: torch.Tensor) -> torch.Tensor:
        start = labels.new_full((labels.shape[0], 1), self.config.decoder_start_token_id)
        shifted = torch.cat([start, labels[:, :-1]], dim=1)
        return shifted.masked_fill(shifted.eq(-100), self.config.pad_token_id)
