"""The source-extended vocabulary of the copy models, as a fixed set of placeholder tokens.

See et al. (2017) extend the vocabulary of every input with its out-of-vocabulary source words: the k-th
distinct such word gets id |V| + k, a target word that is one of them is trained on that id, and decoding
maps the id back to the word. Here the tokenizer holds `copy_slots` placeholder tokens `<copy_0>`,
`<copy_1>`, ... right after its words, so that id |V| + k is the placeholder k: every id is fixed, batches
and models stay ordinary tensors, and the text of an output holds `<copy_k>` until `restore` puts the
source's k-th out-of-vocabulary word back. A source with more distinct unknown words than slots reads the
rest as `<unk>`; a target word outside the vocabulary and absent from the source is `<unk>`, as in See et
al. Only word-level tokenizers have placeholders: a word is exactly one token.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from transformers import PreTrainedTokenizerBase

from ..models.copy_slots import copy_slots, placeholders

PLACEHOLDER_PATTERN = re.compile(r"<copy_(\d+)>")


@dataclass
class EncodedPair:
    input_ids: list[int]
    labels: list[int] | None
    oov_words: list[str]  # the source's k-th distinct out-of-vocabulary word is placeholder k
    source_words: int  # source words kept (before EOS), which token features align with


class CopyVocabulary:
    """Encoding and decoding of a word-level tokenizer, word by word, with its placeholders (a tokenizer
    without any encodes every unknown word as <unk>: the recurrent models with copying off)."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase):
        self.tokenizer = tokenizer
        self.slots = copy_slots(tokenizer)
        vocabulary = tokenizer.get_vocab()
        self.slot_ids = [vocabulary[token] for token in placeholders(self.slots)]
        self.generator_size = len(tokenizer) - self.slots
        if self.slot_ids != list(range(self.generator_size, len(tokenizer))):
            raise ValueError("the copy placeholders must be the tokenizer's last ids, in order")
        self.word_ids = {word: index for word, index in vocabulary.items() if index < self.generator_size}
        self.unk, self.eos = tokenizer.unk_token_id, tokenizer.eos_token_id
        backend = tokenizer.backend_tokenizer
        self.normalizer, self.pre_tokenizer = backend.normalizer, backend.pre_tokenizer

    def words(self, text: str) -> list[str]:
        """The tokenizer's words of `text` (its normalizer and pre-tokenizer)."""
        if self.normalizer is not None:
            text = self.normalizer.normalize_str(text)
        return [word for word, _ in self.pre_tokenizer.pre_tokenize_str(text)]

    def encode(self, source: str, target: str | None, max_source_length: int, max_target_length: int) -> EncodedPair:
        """Source ids (truncated, then EOS) with placeholders for its unknown words, and the target's
        labels (truncated, then EOS) over the same extended vocabulary."""
        kept = self.words(source)[: max_source_length - 1]
        oov_words: list[str] = []
        input_ids = []
        for word in kept:
            index = self.word_ids.get(word)
            if index is None:
                if word not in oov_words and len(oov_words) < self.slots:
                    oov_words.append(word)
                index = self.slot_ids[oov_words.index(word)] if word in oov_words else self.unk
            input_ids.append(index)
        labels = None
        if target is not None:
            labels = [*(self.target_id(word, oov_words) for word in self.words(target)[: max_target_length - 1]), self.eos]
        return EncodedPair([*input_ids, self.eos], labels, oov_words, len(kept))

    def target_id(self, word: str, oov_words: Sequence[str]) -> int:
        index = self.word_ids.get(word)
        if index is not None:
            return index
        return self.slot_ids[oov_words.index(word)] if word in oov_words else self.unk

    def restore(self, text: str, oov_words: Sequence[str] | None) -> str:
        """Decoded text with each placeholder replaced by its source word; with `oov_words` None (the
        Trainer's dev metric, which sees ids without their sources) by a one-token stand-in `copyK`, the
        same in hypothesis and reference, so a copied word still counts as one matching word."""

        def word(match: re.Match) -> str:
            k = int(match.group(1))
            if oov_words is None:
                return f"copy{k}"
            return oov_words[k] if k < len(oov_words) else self.tokenizer.unk_token

        return PLACEHOLDER_PATTERN.sub(word, text)


def copy_vocabulary_of(tokenizer: PreTrainedTokenizerBase) -> CopyVocabulary | None:
    """The copy vocabulary of a copy model's tokenizer (one with copy placeholders), None for any other:
    the one place that decides whether outputs hold placeholders to restore."""
    return CopyVocabulary(tokenizer) if copy_slots(tokenizer) else None
