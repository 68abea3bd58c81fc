"""Task metrics, thin wrappers around the reference packages.

* BLEU: sacrebleu's corpus BLEU, 13a tokenisation by default; `none` scores text that is already
  tokenised (IWSLT14's Moses tokens: fairseq's tokenised BLEU). The signature is returned with the score
  so a table can say exactly which BLEU it reports.
* ROUGE: Google's rouge-score with Porter stemming. ROUGE-1/2 and ROUGE-L treat each text as a single
  sequence; ROUGE-Lsum splits sentences at newlines (the convention of the CNN/DM and XSum releases, one
  summary sentence per line). Texts without newlines give ROUGE-Lsum == ROUGE-L. Scores are mean F1 x 100.
* Perplexity: exp of the mean token NLL under teacher forcing (tokens include EOS), from token_nll.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import sacrebleu
from rouge_score import rouge_scorer

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str], tokenize: str = "13a") -> tuple[float, str]:
    """(BLEU in [0, 100], sacrebleu signature) for one reference per hypothesis."""
    _check_aligned(hypotheses, references)
    metric = sacrebleu.BLEU(tokenize=tokenize)
    result = metric.corpus_score(list(hypotheses), [list(references)])
    return float(result.score), str(metric.get_signature())


def bleu_statistics(hypotheses: Sequence[str], references: Sequence[str], tokenize: str = "13a") -> np.ndarray:
    """Per-sentence BLEU sufficient statistics (n-gram matches and totals, lengths), one row per sentence:
    summing any subset of rows and scoring the sums gives that subset's corpus BLEU (bootstrap resampling)."""
    _check_aligned(hypotheses, references)
    return np.asarray(sacrebleu.BLEU(tokenize=tokenize)._extract_corpus_statistics(list(hypotheses), [list(references)]), dtype=np.int64)


def bleu_from_statistics(statistics: np.ndarray, tokenize: str = "13a") -> float:
    """Corpus BLEU from summed sufficient statistics (see bleu_statistics)."""
    return float(sacrebleu.BLEU(tokenize=tokenize)._compute_score_from_stats(statistics.tolist()).score)


def rouge_per_example(hypotheses: Sequence[str], references: Sequence[str]) -> dict[str, np.ndarray]:
    """F1 x 100 of ROUGE-1, ROUGE-2, ROUGE-L and ROUGE-Lsum (stemmed) for each pair."""
    _check_aligned(hypotheses, references)
    scorer = rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=True, split_summaries=False)
    values = {name: np.zeros(len(hypotheses)) for name in ROUGE_TYPES}
    for index, (hypothesis, reference) in enumerate(zip(hypotheses, references, strict=True)):
        scores = scorer.score(reference, hypothesis)
        for name in ROUGE_TYPES:
            values[name][index] = 100.0 * scores[name].fmeasure
    return values


def corpus_rouge(hypotheses: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    """Mean F1 x 100 of ROUGE-1, ROUGE-2, ROUGE-L and ROUGE-Lsum (stemmed)."""
    per_example = rouge_per_example(hypotheses, references)
    return {name: float(values.mean()) if values.size else 0.0 for name, values in per_example.items()}


def perplexity(total_nll: float, num_tokens: int) -> float:
    if num_tokens <= 0:
        raise ValueError("perplexity needs at least one token")
    return math.exp(total_nll / num_tokens)


def task_metric(name: str, hypotheses: Sequence[str], references: Sequence[str], bleu_tokenize: str = "13a") -> float:
    """The dev metric that selects checkpoints: `bleu` or `rouge2`."""
    if name == "bleu":
        return corpus_bleu(hypotheses, references, bleu_tokenize)[0]
    if name == "rouge2":
        return corpus_rouge(hypotheses, references)["rouge2"]
    raise ValueError(f"unknown metric '{name}' (expected bleu or rouge2)")


def _check_aligned(hypotheses: Sequence[str], references: Sequence[str]) -> None:
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
