"""How much of the text a trained vocabulary covers: the share of reference tokens that are `<unk>`.

A token the tokenizer cannot represent is scored as `<unk>`, which a model learns to predict easily, so a
vocabulary too small for the data gives a low perplexity over outputs that say little. Above
UNK_WARNING_RATE the scores warn (evaluation/scoring.py); above `tokenizer.max_unk_share` of the training
references the tokenizer job stops, before a model trains on them (`min_frequency` above most words'
counts leaves a vocabulary of a handful of words whatever `vocab_size` allows). A copy model
(`tokenizer.copy_slots`) writes a reference word the source holds through its copy placeholder, so its
share counts only the words neither the vocabulary nor the source holds.
"""

from __future__ import annotations

from collections.abc import Iterable

UNK_WARNING_RATE = 5.0  # percent of reference tokens


def unknown_share(sequences: Iterable[list[int]], unk_id: int) -> float:
    """The percentage of the tokens of `sequences` that are `unk_id`."""
    unknown = total = 0
    for ids in sequences:
        unknown += sum(token == unk_id for token in ids)
        total += len(ids)
    return 100.0 * unknown / max(total, 1)


def unk_rate(tokenizer, texts: Iterable[str]) -> float:
    """The percentage of the tokens of `texts` that `tokenizer` encodes as its unknown token."""
    return unknown_share(tokenizer(list(texts), add_special_tokens=False)["input_ids"], tokenizer.unk_token_id)


def copied_unk_rate(tokenizer, pairs: Iterable[tuple[str, str]]) -> float:
    """The percentage of the reference tokens of (source, reference) `pairs` that a copy model sees as
    `<unk>`: words neither its vocabulary nor its source's copy placeholders hold (whole texts, untruncated)."""
    from .copy_vocabulary import CopyVocabulary  # here: the analysis jobs read this module and never load transformers

    vocabulary = CopyVocabulary(tokenizer)
    labels = (vocabulary.encode(source, target, 1 << 30, 1 << 30).labels[:-1] for source, target in pairs)  # without EOS
    return unknown_share(labels, vocabulary.unk)


def coverage_problem(rate: float, settings: dict) -> str | None:
    """Why a vocabulary whose training references are `rate` percent `<unk>` cannot be trained on (None:
    it can)."""
    if rate <= settings["max_unk_share"]:
        return None
    copying = " even with copying from the source" if settings.get("copy_slots") else ""
    return (
        f"{rate:.1f}% of the training references' tokens are <unk>{copying} (above tokenizer.max_unk_share, "
        f"{settings['max_unk_share']:g}%): the vocabulary is too small for the data; lower tokenizer.min_frequency "
        f"(now {settings['min_frequency']}) or raise tokenizer.vocab_size (now {settings['vocab_size']})"
    )
