"""Sequence lengths against a model's position table, checked when a job loads the model: a pretrained
model's limit is in its own config, which the workflow does not read when it plans (scratch models are
checked then: config/setting_relations.py). Past the limit a learned position embedding fails deep in
the forward pass with `IndexError: index out of range in self`."""

from __future__ import annotations

from transformers import PreTrainedModel

from ..config.setting_relations import sequence_lengths


def check_position_limit(model: PreTrainedModel, task: dict) -> None:
    """Raise ValueError naming the setting whose sequences exceed `model`'s max_position_embeddings (models
    without one, such as the recurrent ones, have no limit)."""
    limit = getattr(model.config, "max_position_embeddings", None)
    if not limit:
        return
    for what, length in sequence_lengths(task, not model.config.is_encoder_decoder).items():
        if length > limit:
            raise ValueError(
                f"task {task.get('name', '?')}: {what} needs {length} positions, but the model "
                f"({getattr(model.config, '_name_or_path', '') or model.config.model_type}) has {limit} (max_position_embeddings); "
                "shorten the sequences in the config"
            )
