"""The copy placeholders a tokenizer holds after its words: the source-extended vocabulary of the copy
models (see data/copy_vocabulary.py for how texts use them)."""

from __future__ import annotations

from transformers import PreTrainedTokenizerBase

PLACEHOLDER = "<copy_{}>"


def placeholders(slots: int) -> list[str]:
    return [PLACEHOLDER.format(k) for k in range(slots)]


def copy_slots(tokenizer: PreTrainedTokenizerBase) -> int:
    """How many copy placeholders the tokenizer holds (0: a tokenizer without copying)."""
    vocabulary = tokenizer.get_vocab()
    slots = 0
    while PLACEHOLDER.format(slots) in vocabulary:
        slots += 1
    return slots
