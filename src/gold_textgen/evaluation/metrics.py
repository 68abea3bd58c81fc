"""Task metrics, thin wrappers around the reference packages.

* BLEU: sacrebleu's corpus BLEU, 13a tokenisation by default; `none` scores text that is already
  tokenised (IWSLT14's Moses tokens: fairseq's tokenised BLEU). The signature is returned with the score
  so a table can say exactly which BLEU it reports.
* chrF: sacrebleu's corpus chrF (character 6-grams, beta 2), with its signature; the paper reports no
  chrF, but translation users expect it beside BLEU.
* ROUGE: Google's rouge-score (which tokenises as ROUGE-1.5.5 does: lowercase, runs of a-z0-9), mean
  F1 x 100, in one of three named variants (`ROUGE_VARIANTS`, the task's `rouge` setting):
  - `stemmed`: Porter stemming; ROUGE-Lsum splits sentences at newlines (the convention of the CNN/DM and
    XSum releases, one summary sentence per line).
  - `files2rouge`: what the paper's summarisation numbers ran (the authors' `run_cnndm_validation_step2.sh`:
    PTB tokenisation, then files2rouge, as fairseq's BART README does): ROUGE-1.5.5 with files2rouge's
    default arguments `-c 95 -r 1000 -n 2 -a`, i.e. no stemming (no `-m`), and summary-level ROUGE-L over
    sentences that files2rouge splits at its end-of-sentence string "." (`--eos`). Here sentences end
    after a "." followed by white space.
  - `rouge155_stemmed`: what the paper's standard-model numbers ran (clovaai/FocusSeq2Seq
    `utils/rouge/perl_rouge.py`: ROUGE-1.5.5 `-a -c 95 -m -n 2`, i.e. Porter stemming, summary-level
    ROUGE-L over the sentences `utils/data_utils.py` `split_sentences` cuts after each word ".").
  ROUGE-1/2 and ROUGE-L treat each text as a single sequence in both; a text with one sentence gives
  ROUGE-Lsum == ROUGE-L.
* Exact match: the percentage of outputs whose final answer (final_answer.py: the number after `####`)
  equals the reference's; GSM8K's accuracy.
* Perplexity: exp of the mean token NLL under teacher forcing (tokens include EOS), from token_nll.py.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sacrebleu

from ..config.views import ANSWER_METRIC_NAMES
from . import sacrebleu_statistics
from .final_answer import answers_match, flexible_extract, strict_match

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
ROUGE_VARIANTS = ("stemmed", "files2rouge", "rouge155_stemmed")
_PERIOD_END = re.compile(r"(?<=\.)\s+")


@dataclass(frozen=True)
class Scoring:
    """How a task's outputs are scored: sacrebleu's BLEU tokenizer, the ROUGE variant, and whether chrF++
    and TER are reported beside BLEU (tasks scored by BLEU, such as translation, as MT papers report them;
    not summaries, where TER's edit search on long texts costs minutes and no paper reports it)."""

    bleu_tokenize: str = "13a"
    rouge: str = "stemmed"
    translation_metrics: bool = False

    def __post_init__(self) -> None:
        _check_rouge_variant(self.rouge)

    @classmethod
    def of_task(cls, task: dict) -> Scoring:
        return cls(bleu_tokenize=task["bleu_tokenize"], rouge=task["rouge"], translation_metrics=task["metric"] == "bleu")


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str], tokenize: str = "13a") -> tuple[float, str]:
    """(BLEU in [0, 100], sacrebleu signature) for one reference per hypothesis."""
    _check_aligned(hypotheses, references)
    metric = sacrebleu.BLEU(tokenize=tokenize)
    result = metric.corpus_score(list(hypotheses), [list(references)])
    return float(result.score), str(metric.get_signature())


def corpus_chrf(hypotheses: Sequence[str], references: Sequence[str]) -> tuple[float, str]:
    """(chrF in [0, 100], sacrebleu signature) for one reference per hypothesis."""
    _check_aligned(hypotheses, references)
    metric = sacrebleu.CHRF()
    result = metric.corpus_score(list(hypotheses), [list(references)])
    return float(result.score), str(metric.get_signature())


def bleu_statistics(hypotheses: Sequence[str], references: Sequence[str], tokenize: str = "13a") -> np.ndarray:
    """Per-sentence BLEU sufficient statistics (n-gram matches and totals, lengths), one row per sentence:
    summing any subset of rows and scoring the sums gives that subset's corpus BLEU (bootstrap resampling)."""
    _check_aligned(hypotheses, references)
    return sacrebleu_statistics.statistics("bleu", hypotheses, references, tokenize).astype(np.int64)


def bleu_from_statistics(statistics: np.ndarray, tokenize: str = "13a") -> float:
    """Corpus BLEU from summed sufficient statistics (see bleu_statistics)."""
    return float(sacrebleu_statistics.score_sums("bleu", statistics, tokenize)[0])


def rouge_per_example(hypotheses: Sequence[str], references: Sequence[str], variant: str = "stemmed") -> dict[str, np.ndarray]:
    """F1 x 100 of ROUGE-1, ROUGE-2, ROUGE-L and ROUGE-Lsum for each pair, in the named variant."""
    _check_aligned(hypotheses, references)
    _check_rouge_variant(variant)
    # Imported here, not with the module: rouge-score pulls in nltk and scipy (about a second), which every
    # training job would pay for a dev BLEU that needs neither.
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=variant != "files2rouge", split_summaries=False)
    sentences = {"stemmed": None, "files2rouge": _period_sentences, "rouge155_stemmed": _period_word_sentences}[variant]
    values = {name: np.zeros(len(hypotheses)) for name in ROUGE_TYPES}
    for index, (hypothesis, reference) in enumerate(zip(hypotheses, references, strict=True)):
        if sentences is not None:
            hypothesis, reference = sentences(hypothesis), sentences(reference)
        scores = scorer.score(reference, hypothesis)
        for name in ROUGE_TYPES:
            values[name][index] = 100.0 * scores[name].fmeasure
    return values


def _check_rouge_variant(variant: str) -> None:
    if variant not in ROUGE_VARIANTS:
        raise ValueError(f"unknown ROUGE variant '{variant}' (expected {' or '.join(ROUGE_VARIANTS)})")


def _period_sentences(text: str) -> str:
    """One sentence per line, a sentence ending after "." and white space (files2rouge's `--eos .`);
    existing line breaks stay sentence breaks. Only ROUGE-Lsum reads the lines."""
    return _PERIOD_END.sub("\n", text)


def _period_word_sentences(text: str) -> str:
    """One sentence per line, a sentence ending after each whitespace-separated word "." (FocusSeq2Seq's
    split_sentences); existing line breaks stay sentence breaks."""
    sentences = []
    for line in text.split("\n"):
        current: list[str] = []
        for word in line.split():
            current.append(word)
            if word == ".":
                sentences.append(" ".join(current))
                current = []
        if current:
            sentences.append(" ".join(current))
    return "\n".join(sentences)


def corpus_rouge(hypotheses: Sequence[str], references: Sequence[str], variant: str = "stemmed") -> dict[str, float]:
    """Mean F1 x 100 of ROUGE-1, ROUGE-2, ROUGE-L and ROUGE-Lsum in the named variant."""
    per_example = rouge_per_example(hypotheses, references, variant)
    return {name: float(values.mean()) if values.size else 0.0 for name, values in per_example.items()}


# The final-answer metrics (final_answer.py): lm-eval's two GSM8K scores and this project's value comparison.
ANSWER_METRICS = dict(zip(ANSWER_METRIC_NAMES, (strict_match, flexible_extract, answers_match), strict=True))


def answer_metric_per_example(name: str, hypotheses: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """100 where an output's final answer is right by the answer metric `name`, else 0."""
    _check_aligned(hypotheses, references)
    right = ANSWER_METRICS[name]
    return np.array([100.0 * right(h, r) for h, r in zip(hypotheses, references, strict=True)])


def exact_match_per_example(hypotheses: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """100 where an output's final answer equals its reference's by value, else 0."""
    return answer_metric_per_example("exact_match", hypotheses, references)


def corpus_answer_metric(name: str, hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Accuracy in [0, 100] by the answer metric `name`."""
    return float(answer_metric_per_example(name, hypotheses, references).mean()) if len(hypotheses) else 0.0


def corpus_exact_match(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Exact-match accuracy (by value) in [0, 100]."""
    return corpus_answer_metric("exact_match", hypotheses, references)


def perplexity(total_nll: float, num_tokens: int) -> float:
    if num_tokens <= 0:
        raise ValueError("perplexity needs at least one token")
    return math.exp(total_nll / num_tokens)


def task_metric(name: str, hypotheses: Sequence[str], references: Sequence[str], scoring: Scoring = Scoring()) -> float:
    """The dev metric that selects checkpoints: `bleu`, `rouge2` or an answer metric (strict_match,
    flexible_extract, exact_match), scored as the task's tables are."""
    if name == "bleu":
        return corpus_bleu(hypotheses, references, scoring.bleu_tokenize)[0]
    if name == "rouge2":
        return corpus_rouge(hypotheses, references, scoring.rouge)["rouge2"]
    if name in ANSWER_METRICS:
        return corpus_answer_metric(name, hypotheses, references)
    raise ValueError(f"unknown metric '{name}' (expected bleu, rouge2, {', '.join(ANSWER_METRICS)})")


def sentence_rewards(name: str, hypotheses: Sequence[str], references: Sequence[str], scoring: Scoring = Scoring()) -> np.ndarray:
    """The task metric of each hypothesis against its reference alone, in [0, 1]: what the table scorer
    (`task_metric`) gives a one-sentence corpus, divided by 100 (BLEU from each sentence's own sufficient
    statistics, ROUGE-2 F1 per example in the task's variant, 1 for a right final answer). The on-policy
    objectives' reward."""
    _check_aligned(hypotheses, references)
    if name == "bleu":
        statistics = bleu_statistics(hypotheses, references, scoring.bleu_tokenize)
        return np.array([bleu_from_statistics(row, scoring.bleu_tokenize) for row in statistics]) / 100.0
    if name == "rouge2":
        return rouge_per_example(hypotheses, references, scoring.rouge)["rouge2"] / 100.0
    if name in ANSWER_METRICS:
        return answer_metric_per_example(name, hypotheses, references) / 100.0
    raise ValueError(f"unknown task metric '{name}' (bleu, rouge2, {', '.join(ANSWER_METRICS)})")


def _check_aligned(hypotheses: Sequence[str], references: Sequence[str]) -> None:
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
