"""Scores of one generation file: corpus BLEU, ROUGE and, from the teacher-forced NLL of the same model
and split, perplexity. Light on imports (no torch): one score job runs per generation file."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..workflow.files import read_jsonl, write_json
from . import metrics


def nll_summary(table: pd.DataFrame) -> dict[str, float]:
    """Token-level mean NLL, perplexity and teacher-forced next-token accuracy."""
    total, count = float(table["nll"].astype("float64").sum()), len(table)
    return {
        "nll_per_token": total / count,
        "perplexity": metrics.perplexity(total, count),
        "token_accuracy": float(table["correct"].mean()) * 100.0,
        "num_tokens": count,
    }


def score_generations(generations: list[dict], nll_table: pd.DataFrame | None, scoring: metrics.Scoring) -> dict:
    """BLEU and chrF (with their sacrebleu signatures), ROUGE (with its variant's name) and output length; perplexity
    and token accuracy too when the model's NLL table is given (a baseline such as lead-3 has none)."""
    hypotheses = [g["hypothesis"] for g in generations]
    references = [g["reference"] for g in generations]
    bleu, signature = metrics.corpus_bleu(hypotheses, references, scoring.bleu_tokenize)
    chrf, chrf_signature = metrics.corpus_chrf(hypotheses, references)
    rouge = metrics.corpus_rouge(hypotheses, references, scoring.rouge)
    scores = {"bleu": bleu, "bleu_signature": signature, "chrf": chrf, "chrf_signature": chrf_signature}
    scores.update(rouge, rouge_variant=scoring.rouge)
    if nll_table is not None:
        scores.update(nll_summary(nll_table))
    scores["num_examples"] = len(generations)
    scores["mean_output_words"] = sum(len(h.split()) for h in hypotheses) / max(1, len(hypotheses))
    return scores


def write_scores(generations_path: Path, nll_path: Path | None, output_path: Path, labels: dict, scoring: metrics.Scoring) -> dict:
    nll_table = pd.read_parquet(nll_path) if nll_path is not None else None
    scores = {**labels, **score_generations(read_jsonl(generations_path), nll_table, scoring)}
    write_json(output_path, scores)
    return scores
