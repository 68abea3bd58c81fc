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


def unpacked_teacher_forcing(model, batch: dict, with_labels: bool = True):
    """(log-probabilities [B, T, output_size], loss or None, coverage losses [B, T] or None) of `batch` as
    `forward` computed them before it packed the positions (packed_positions.py): every position of the
    padded batch through the decoder cell and the attention, the output layer once over all of them."""
    features = {name.removesuffix("_tags"): value for name, value in batch.items() if name.endswith("_tags")}
    labels = batch["labels"]
    encoded, state = model.encode(batch["input_ids"], batch.get("attention_mask"), features)
    decoder_input_ids = batch.get("decoder_input_ids", model.shift_right(labels))
    words = model.embed_words(decoder_input_ids)
    steps, coverage = [], []
    for position in range(decoder_input_ids.shape[1]):
        reads, state, coverage_loss = model.recur(words[:, position], state, encoded)
        steps.append(reads)
        coverage.append(coverage_loss)
    batch_size, length = decoder_input_ids.shape
    reads = {key: torch.stack([step[key] for step in steps], dim=1).flatten(0, 1) for key in steps[0]}
    source = (tensor.repeat_interleave(length, dim=0) for tensor in (encoded.source_ids, encoded.first_position))
    distribution = model.output_distribution(reads, *source)
    logits = distribution.log_probs().view(batch_size, length, -1)
    coverage_losses = torch.stack(coverage, dim=1) if model.config.coverage else None
    if not with_labels:
        return logits, None, coverage_losses
    token_log_likelihoods = distribution.log_likelihood(labels.flatten()).view(batch_size, length)
    return logits, model.teacher_forced_loss(token_log_likelihoods, labels, coverage_losses), coverage_losses
