"""What a loaded model reads, asked of the model itself: whether it is a decoder-only model in the prompt ->
completion contract (its labels hold no start token), which token features a recurrent model embeds, and
whether it gives its labels' log-likelihoods without the [B, T, V] table. An imported model's answers are
its own, whatever the task's `model` settings say."""

from __future__ import annotations

from transformers import PreTrainedModel

from .prompt_completion import PromptCompletionLM


def reads_prompt_completion(model: PreTrainedModel) -> bool:
    return isinstance(model, PromptCompletionLM)


def token_features(model: PreTrainedModel) -> tuple[str, ...]:
    """The token features the model embeds, in its config's order (none but for the recurrent models)."""
    return tuple(getattr(model.config, "feature_sizes", None) or ())


def reads_labels_cheaply(model) -> bool:
    """Whether `model`, called with labels, returns their log-probabilities (`label_log_likelihoods`) from
    the output layer's rows at the labels (RecurrentSeq2SeqModel)."""
    return bool(getattr(model, "returns_label_log_likelihoods", False))


# What such a model is asked for in place of the [B, T, V] table where nothing reads it: the entropy and
# most likely id of each position, which the training log reports (training/token_statistics.py).
WITHOUT_TABLE = {"return_logits": False, "return_token_statistics": True}
