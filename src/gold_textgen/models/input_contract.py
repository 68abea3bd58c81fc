"""What a loaded model reads, asked of the model itself: whether it is a decoder-only model in the prompt ->
completion contract (its labels hold no start token), and which token features a recurrent model embeds.
An imported model's answers are its own, whatever the task's `model` settings say."""

from __future__ import annotations

from transformers import PreTrainedModel

from .prompt_completion import PromptCompletionLM


def reads_prompt_completion(model: PreTrainedModel) -> bool:
    return isinstance(model, PromptCompletionLM)


def token_features(model: PreTrainedModel) -> tuple[str, ...]:
    """The token features the model embeds, in its config's order (none but for the recurrent models)."""
    return tuple(getattr(model.config, "feature_sizes", None) or ())
