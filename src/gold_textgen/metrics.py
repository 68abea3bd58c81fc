"""Task metrics, thin wrappers around the reference packages.

* BLEU: sacrebleu's corpus BLEU with its default 13a tokenisation; the signature is returned with the
  score so a table can say exactly which BLEU it reports.
* ROUGE: Google's rouge-score with Porter stemming. ROUGE-1/2 and ROUGE-L treat each text as a single
  sequence; ROUGE-Lsum splits sentences at newlines (the convention of the CNN/DM and XSum releases, one
  summary sentence per line). Texts without newlines give ROUGE-Lsum == ROUGE-L. Scores are mean F1 x 100.
* Perplexity: exp of the mean token NLL under teacher forcing (tokens include EOS), from token_nll.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import sacrebleu
from rouge_score import rouge_scorer

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> tuple[float, str]:
    """(BLEU in [0, 100], sacrebleu signature) for one reference per hypothesis."""
    _check_aligned(hypotheses, references)
    metric = sacrebleu.BLEU()
    result = metric.corpus_score(list(hypotheses), [list(references)])
    return float(result.score), str(metric.get_signature())


def corpus_rouge(hypotheses: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    """Mean F1 x 100 of ROUGE-1, ROUGE-2, ROUGE-L and ROUGE-Lsum (stemmed)."""
    _check_aligned(hypotheses, references)
    scorer = rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=True, split_summaries=False)
    totals = dict.fromkeys(ROUGE_TYPES, 0.0)
    for hypothesis, reference in zip(hypotheses, references, strict=True):
        scores = scorer.score(reference, hypothesis)
        for name in ROUGE_TYPES:
            totals[name] += scores[name].fmeasure
    count = max(1, len(hypotheses))
    return {name: 100.0 * total / count for name, total in totals.items()}


def perplexity(total_nll: float, num_tokens: int) -> float:
    if num_tokens <= 0:
        raise ValueError("perplexity needs at least one token")
    return math.exp(total_nll / num_tokens)


def task_metric(name: str, hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """The dev metric that selects checkpoints: `bleu` or `rouge2`."""
    if name == "bleu":
        return corpus_bleu(hypotheses, references)[0]
    if name == "rouge2":
        return corpus_rouge(hypotheses, references)["rouge2"]
    raise ValueError(f"unknown metric '{name}' (expected bleu or rouge2)")


def _check_aligned(hypotheses: Sequence[str], references: Sequence[str]) -> None:
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
