"""Outputs that end where lm-evaluation-harness ends them: before the first of the task's stop sequences
(`generation.stop_sequences`, lm-eval's `until`).

lm-eval stops generating at the token whose decoding completes a stop sequence, with special tokens kept
in the decoded text (its MultiTokenEOSCriteria), then cuts the decoded continuation at the first stop.
So `<|im_end|>`, a special token of Qwen's tokenizers but not the EOS of a base model (whose EOS is
`<|endoftext|>`), stops the output. Decoding with `skip_special_tokens` before the cut would delete it and
keep the run-on after it, which lm-eval never scores (a second answer's number then wins
flexible-extract). Here generation stops at the same token (transformers' stop strings), and the text is
cut at the first stop found with special tokens kept, before they are stripped.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

from transformers import GenerationConfig, PreTrainedTokenizerBase


def truncated_at_stop(text: str, stop_sequences: Sequence[str]) -> str:
    """`text` up to the first occurrence of any stop sequence (lm-eval's `until`), unchanged without one."""
    cut = min((index for stop in stop_sequences if (index := text.find(stop)) >= 0), default=len(text))
    return text[:cut]


def with_stop_strings(config: GenerationConfig, stop_sequences: Sequence[str]) -> GenerationConfig:
    """A copy of `config` that ends each sequence at the token completing a stop sequence. generate() finds
    them with the tokenizer, passed as `tokenizer=` (a model with its own search ignores both; the cut of
    `text_before_stop` still applies). In the config, not beside it: transformers deprecates generation
    settings passed next to a `generation_config`."""
    stopped = copy.deepcopy(config)
    stopped.stop_strings = list(stop_sequences) or None
    return stopped


def text_before_stop(tokenizer: PreTrainedTokenizerBase, ids: Sequence[int], stop_sequences: Sequence[str]) -> str:
    """The decoded text of `ids` (special tokens stripped) up to the first stop sequence, which is looked
    for with special tokens kept: the text of the shortest prefix of `ids` whose decoding holds a stop."""

    def holds_stop(length: int) -> bool:
        decoded = tokenizer.decode(ids[:length], skip_special_tokens=False)
        return any(stop in decoded for stop in stop_sequences)

    if not stop_sequences or not holds_stop(len(ids)):
        return tokenizer.decode(ids, skip_special_tokens=True)
    shortest, longest = 1, len(ids)  # a prefix that holds a stop only grows into longer ones that do
    while shortest < longest:
        middle = (shortest + longest) // 2
        if holds_stop(middle):
            longest = middle
        else:
            shortest = middle + 1
    return truncated_at_stop(tokenizer.decode(ids[:shortest], skip_special_tokens=True), stop_sequences)
