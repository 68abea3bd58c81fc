"""Diversity of outputs (the paper's Section 4.4): how many distinct 1..n-grams a system produces over a
corpus, against the references, and how much of each output is copied from its input."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def ngrams(tokens: Sequence[str], order: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + order]) for i in range(len(tokens) - order + 1)]


def distinct_ngrams(texts: Iterable[str], order: int) -> int:
    """The number of distinct `order`-grams over all texts (whitespace tokens)."""
    seen: set[tuple[str, ...]] = set()
    for text in texts:
        seen.update(ngrams(text.split(), order))
    return len(seen)


def input_overlap(outputs: Sequence[str], inputs: Sequence[str], order: int) -> float:
    """The share of output `order`-gram occurrences that also occur in the output's own input."""
    copied = total = 0
    for output, source in zip(outputs, inputs, strict=True):
        source_grams = set(ngrams(source.split(), order))
        grams = ngrams(output.split(), order)
        copied += sum(gram in source_grams for gram in grams)
        total += len(grams)
    return copied / total if total else float("nan")


def diversity_row(texts: Sequence[str], inputs: Sequence[str], max_order: int) -> dict:
    row = {f"distinct_{n}": distinct_ngrams(texts, n) for n in range(1, max_order + 1)}
    row.update({f"input_overlap_{n}": input_overlap(texts, inputs, n) for n in range(1, max_order + 1)})
    row["mean_words"] = sum(len(t.split()) for t in texts) / max(1, len(texts))
    return row
