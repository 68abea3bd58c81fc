"""Teacher forcing of the copy models position by position, through `step` as decoding runs it (the dense
output distribution, the loss gathered from it): the reference that `RecurrentSeq2SeqModel.forward` (its
output layer once over all positions, the loss from the targets' log-likelihoods alone) must equal."""

from __future__ import annotations

import torch


def stepwise_teacher_forcing(model, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """(log-probabilities [B, T, output_size], loss) of `batch` (input_ids, attention_mask, labels and
    any *_tags features), one `step` per target position."""
    features = {name.removesuffix("_tags"): value for name, value in batch.items() if name.endswith("_tags")}
    encoded, state = model.encode(batch["input_ids"], batch.get("attention_mask"), features)
    decoder_input_ids = model.shift_right(batch["labels"])
    steps, coverage = [], []
    for position in range(decoder_input_ids.shape[1]):
        log_probs, state, coverage_loss = model.step(decoder_input_ids[:, position], state, encoded)
        steps.append(log_probs)
        coverage.append(coverage_loss)
    logits = torch.stack(steps, dim=1)
    coverage_losses = torch.stack(coverage, dim=1) if model.config.coverage else None
    token_log_likelihoods = logits.gather(-1, batch["labels"].clamp_min(0).unsqueeze(-1)).squeeze(-1)
    return logits, model.teacher_forced_loss(token_log_likelihoods, batch["labels"], coverage_losses)
