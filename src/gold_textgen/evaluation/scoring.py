"""Scores of one generation file: corpus BLEU, ROUGE and, from the teacher-forced NLL of the same model
and split, perplexity and the share of reference tokens that are `<unk>`. Light on imports (no torch).

The `<unk>` share belongs beside every perplexity: a reference token the tokenizer cannot represent is
scored as `<unk>`, which a model learns to predict easily, so a vocabulary too small for the data gives a
low perplexity (1.9 with 4 words on the demo) and empty outputs. Above `UNK_WARNING_RATE` percent the
evaluation log, the tables' `unk_rate` column and the end of the workflow say so."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from ..data.vocabulary_coverage import UNK_WARNING_RATE
from ..runtime.files import read_json, read_jsonl, write_json
from . import metrics, sacrebleu_statistics
from .token_table import read_token_table

log = logging.getLogger(__name__)


def nll_summary(table: pd.DataFrame, unk_token_id: int | None = None) -> dict[str, float]:
    """Token-level mean NLL, perplexity, teacher-forced next-token accuracy and `unk_rate`, the percentage
    of reference tokens that are `unk_token_id` (0 for a tokenizer without one)."""
    total, count = float(table["nll"].astype("float64").sum()), len(table)
    unknown = 0 if unk_token_id is None else int(table["token_id"].eq(unk_token_id).sum())
    return {
        "nll_per_token": total / count,
        "perplexity": metrics.perplexity(total, count),
        "token_accuracy": float(table["correct"].mean()) * 100.0,
        "unk_rate": 100.0 * unknown / count,
        "num_tokens": count,
    }


def unk_warning(unk_rate: float, what: str) -> str | None:
    """The warning for a share of `<unk>` reference tokens above UNK_WARNING_RATE (None below it)."""
    if unk_rate <= UNK_WARNING_RATE:
        return None
    return (
        f"{what}: {unk_rate:.1f}% of the reference tokens are <unk> (above {UNK_WARNING_RATE:g}%): perplexity and accuracy "
        "count predicting <unk> as success; raise tokenizer.vocab_size or lower min_frequency"
    )


def unk_warnings_from_scores(paths: Iterable[str | Path]) -> list[str]:
    """One warning per task and split whose score files report too many `<unk>` references (the share
    depends on the tokenizer and the references only, so one file per task and split tells)."""
    worst: dict[tuple[str, str], float] = {}
    for path in paths:
        scores = read_json(path)
        if "unk_rate" in scores:
            key = (scores["task"], scores["split"])
            worst[key] = max(worst.get(key, 0.0), scores["unk_rate"])
    return [message for (task, split), rate in sorted(worst.items()) if (message := unk_warning(rate, f"task {task}, {split} split"))]


def score_generations(
    generations: list[dict], nll_table: pd.DataFrame | None, scoring: metrics.Scoring, unk_token_id: int | None = None
) -> dict:
    """BLEU and chrF (with their sacrebleu signatures; chrF++ and TER too where `scoring` asks for them),
    ROUGE (with its variant's name), the exact-match
    accuracy of final answers (tables show it for tasks scored by it) and output length; perplexity,
    token accuracy and the `<unk>` share of the references too when the model's NLL table is given (a baseline
    such as lead-3 has none)."""
    hypotheses = [g["hypothesis"] for g in generations]
    references = [g["reference"] for g in generations]
    bleu, signature = metrics.corpus_bleu(hypotheses, references, scoring.bleu_tokenize)
    chrf, chrf_signature = metrics.corpus_chrf(hypotheses, references)
    rouge = metrics.corpus_rouge(hypotheses, references, scoring.rouge)
    scores = {"bleu": bleu, "bleu_signature": signature, "chrf": chrf, "chrf_signature": chrf_signature}
    if scoring.translation_metrics:
        for name in ("chrf_pp", "ter"):
            scores[name], scores[f"{name}_signature"] = sacrebleu_statistics.corpus_score(name, hypotheses, references)
    for name in metrics.ANSWER_METRICS:  # final answers (GSM8K): lm-eval's two scores and the value comparison
        scores[name] = metrics.corpus_answer_metric(name, hypotheses, references)
    scores.update(rouge, rouge_variant=scoring.rouge)
    if nll_table is not None:
        scores.update(nll_summary(nll_table, unk_token_id))
    scores["num_examples"] = len(generations)
    scores["mean_output_words"] = sum(len(h.split()) for h in hypotheses) / max(1, len(hypotheses))
    return scores


def write_scores(generations_path: Path, nll_path: Path | None, output_path: Path, labels: dict, scoring: metrics.Scoring) -> dict:
    nll_table = read_token_table(nll_path, "its evaluate rule") if nll_path is not None else None
    scores = {**labels, **score_generations(read_jsonl(generations_path), nll_table, scoring)}
    write_json(output_path, scores)
    return scores
