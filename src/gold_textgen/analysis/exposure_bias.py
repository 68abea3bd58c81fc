"""Exposure bias on generations (the paper's Figure 4): sentence-level BLEU-n of each output against its
reference, by output length, beside the same against a shuffled reference (the control: what BLEU-n gives
for an unrelated sentence of the same corpus). If errors compound as outputs grow, BLEU against the real
reference falls with length faster than the control does."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np
import pandas as pd
from sacrebleu.metrics import BLEU

from .bootstrap import mean_with_interval


@cache
def _unsmoothed_bleu(order: int) -> BLEU:
    return BLEU(max_ngram_order=order, smooth_method="none", effective_order=False)


def sentence_bleu(hypothesis: str, reference: str, order: int) -> float:
    """Unsmoothed sentence-level BLEU-`order` (0 when some n-gram order has no match), as in the paper.

    Scored as a one-sentence corpus: the same number as sacrebleu's sentence_score without smoothing,
    which would log a recommendation to smooth on every call."""
    return _unsmoothed_bleu(order).corpus_score([hypothesis], [[reference]]).score


def length_bin_edges(lengths: Sequence[int], num_bins: int) -> np.ndarray:
    """Equal-width bin edges (whole words) over the observed lengths; compute them over every system's
    outputs together so that all curves share their x positions."""
    lengths = np.asarray(lengths)
    return np.unique(np.floor(np.linspace(lengths.min(), lengths.max() + 1, num_bins + 1)).astype(int))


def length_bins(lengths: Sequence[int], edges: np.ndarray) -> np.ndarray:
    """Each length's bin, labelled by the bin's lowest length."""
    edges = np.asarray(edges)
    return edges[np.clip(np.searchsorted(edges, np.asarray(lengths), side="right") - 1, 0, len(edges) - 1)]


def sentence_scores(generations: Sequence[dict], orders: Sequence[int] = (2, 3), shuffle_seed: int = 0) -> pd.DataFrame:
    """One row per generation: its length in words, BLEU-n against its reference (`bleu{n}`) and against a
    randomly drawn other reference (`bleu{n}_shuffled`)."""
    hypotheses = [g["hypothesis"] for g in generations]
    references = [g["reference"] for g in generations]
    permutation = np.random.default_rng(shuffle_seed).permutation(len(references))
    shuffled = [references[i] for i in permutation]
    frame = pd.DataFrame({"length": [len(h.split()) for h in hypotheses]})
    for order in orders:
        frame[f"bleu{order}"] = [sentence_bleu(h, r, order) for h, r in zip(hypotheses, references, strict=True)]
        frame[f"bleu{order}_shuffled"] = [sentence_bleu(h, r, order) for h, r in zip(hypotheses, shuffled, strict=True)]
    return frame


def bleu_by_length(
    generations: Sequence[dict],
    edges: Sequence[int],
    orders: Sequence[int] = (2, 3),
    min_count: int = 5,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Mean sentence BLEU-n and its bootstrap interval per length bin (`edges`, see length_bin_edges), for
    the real and the shuffled references; columns `order`, `reference` (`real`/`shuffled`), `length`, `mean`, `low`, `high`, `count`."""
    scores = sentence_scores(generations, orders, shuffle_seed=seed)
    scores["length"] = length_bins(scores["length"], np.asarray(edges))
    parts = []
    for order in orders:
        for reference, column in (("real", f"bleu{order}"), ("shuffled", f"bleu{order}_shuffled")):
            stats = mean_with_interval(scores, "length", column, resamples, confidence, seed, min_count)
            parts.append(stats.assign(order=order, reference=reference))
    return pd.concat(parts, ignore_index=True)[["order", "reference", "length", "mean", "low", "high", "count"]]
