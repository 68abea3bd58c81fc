"""How much of the text a trained vocabulary covers: the share of reference tokens that are `<unk>`.

A token the tokenizer cannot represent is scored as `<unk>`, which a model learns to predict easily, so a
vocabulary too small for the data gives a low perplexity over outputs that say little. Above
UNK_WARNING_RATE the scores warn (evaluation/scoring.py); above UNK_REFUSAL_RATE of the training
references the tokenizer job stops, before a model trains on them (`min_frequency` above most words'
counts leaves a vocabulary of a handful of words whatever `vocab_size` allows).
"""

from __future__ import annotations

from collections.abc import Iterable

UNK_WARNING_RATE = 5.0  # percent of reference tokens
UNK_REFUSAL_RATE = 20.0


def unk_rate(tokenizer, texts: Iterable[str]) -> float:
    """The percentage of the tokens of `texts` that `tokenizer` encodes as its unknown token."""
    unknown = total = 0
    for ids in tokenizer(list(texts), add_special_tokens=False)["input_ids"]:
        unknown += sum(token == tokenizer.unk_token_id for token in ids)
        total += len(ids)
    return 100.0 * unknown / max(total, 1)


def coverage_problem(rate: float, settings: dict) -> str | None:
    """Why a vocabulary whose training references are `rate` percent `<unk>` cannot be trained on (None:
    it can)."""
    if rate <= UNK_REFUSAL_RATE:
        return None
    return (
        f"{rate:.1f}% of the training references' tokens are <unk> (above {UNK_REFUSAL_RATE:g}%): the vocabulary is too small "
        f"for the data; lower tokenizer.min_frequency (now {settings['min_frequency']}) or raise tokenizer.vocab_size "
        f"(now {settings['vocab_size']})"
    )
