"""sacrebleu's corpus metrics (BLEU, chrF, chrF++, TER) as per-example sufficient statistics and a score
of their sums, so that a resample or a randomised mixture of examples is scored without re-reading text
(the paired tests: comparisons/paired_tests.py).

sacrebleu exposes these only through private methods (`_extract_corpus_statistics`,
`_compute_score_from_stats`), which its own paired tests use; this module is the one place that calls
them, the dependency is pinned below sacrebleu's next major version, and
tests/test_significance_tests.py checks that summed statistics score exactly as `corpus_score` does, so a
change of that API fails loudly there."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import sacrebleu

# name -> how to build the metric (BLEU takes the task's tokenisation); chrF++ = chrF with word bigrams.
SACREBLEU_METRICS = ("bleu", "chrf", "chrf_pp", "ter")


@functools.cache
def metric(name: str, tokenize: str = "13a"):
    """The sacrebleu metric object (one per process and setting: building BLEU loads its tokenizer)."""
    if name == "bleu":
        return sacrebleu.BLEU(tokenize=tokenize)
    if name == "chrf":
        return sacrebleu.CHRF()
    if name == "chrf_pp":
        return sacrebleu.CHRF(word_order=2)
    if name == "ter":
        return sacrebleu.TER()
    raise ValueError(f"unknown sacrebleu metric '{name}' (expected one of {', '.join(SACREBLEU_METRICS)})")


def corpus_score(name: str, hypotheses: Sequence[str], references: Sequence[str], tokenize: str = "13a") -> tuple[float, str]:
    """(corpus score, sacrebleu signature) for one reference per hypothesis."""
    scorer = metric(name, tokenize)
    return float(scorer.corpus_score(list(hypotheses), [list(references)]).score), str(scorer.get_signature())


def statistics(name: str, hypotheses: Sequence[str], references: Sequence[str], tokenize: str = "13a") -> np.ndarray:
    """Per-example sufficient statistics, one row per example: summing any subset of rows and scoring the
    sums (score_sums) gives that subset's corpus score."""
    return np.asarray(metric(name, tokenize)._extract_corpus_statistics(list(hypotheses), [list(references)]), dtype=np.float64)


def score_sums(name: str, sums: np.ndarray, tokenize: str = "13a") -> np.ndarray:
    """The corpus score of each row of summed statistics (R x k)."""
    scorer = metric(name, tokenize)
    rows = np.atleast_2d(sums)
    integral = name == "bleu"  # BLEU's counts are integers (its brevity penalty compares lengths)
    return np.array([scorer._compute_score_from_stats((row.round().astype(np.int64) if integral else row).tolist()).score for row in rows])
