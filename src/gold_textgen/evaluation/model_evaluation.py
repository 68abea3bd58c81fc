"""Everything one trained model is evaluated with on one split, in one process with the model loaded once:
the teacher-forced token NLL of the references, then each decoding run (decoder and sampling seed) with
its scores.

One job per model and split keeps a cluster's queue short (a decoding run of the paper's models takes
minutes, far less than a GPU job's wait) and pays the start-up (Python, torch, the model's weights) once
instead of once per run. Every run still has its own generation and score file, so the tables, figures and
analyses read the same files as before, and any one of them is a target (it builds its model's job).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from ..models.input_contract import token_features
from ..runtime.files import read_jsonl, write_json, write_jsonl
from .decoding import generate_texts, generation_config
from .metrics import Scoring
from .scoring import nll_summary, score_generations, unk_warning
from .token_nll import load_evaluated_model, write_token_table

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DecodingRun:
    """One decoding run: the decoder's name and search settings, its sampling seed (0: deterministic)
    and the two files it writes."""

    decoder: str
    sample: int
    settings: dict
    generations: Path
    scores: Path


def evaluate_model(
    model_dir: Path, data_path: Path, nll_path: Path, runs: list[DecodingRun], task: dict, scoring: Scoring, labels: dict
) -> None:
    """Token NLL of the split's references, then every run's outputs and scores (perplexity from the
    same token table). `labels` (task, objective, seed, split) go into every score file."""
    model, tokenizer = load_evaluated_model(model_dir)
    records = read_jsonl(data_path)
    table = write_token_table(model, tokenizer, records, nll_path, task)
    warning = unk_warning(nll_summary(table, tokenizer.unk_token_id)["unk_rate"], f"{data_path}") if len(table) else None
    if warning:
        log.warning(warning)
    generation = task["generation"]
    for number, run in enumerate(runs, start=1):
        config = generation_config(model, generation, run.settings)
        log.info(
            "run %d/%d: %s sample %d on %d examples: %s", number, len(runs), run.decoder, run.sample, len(records), config.to_diff_dict()
        )
        hypotheses = generate_texts(
            model,
            tokenizer,
            records,
            config,
            generation["batch_size"],
            task["max_source_length"],
            run.sample,
            features=token_features(model),
            stop_sequences=generation.get("stop_sequences", ()),
        )
        rows = [
            {"id": r["id"], "source": r["source"], "reference": r["target"], "hypothesis": h, "decoder": run.decoder}
            for r, h in zip(records, hypotheses, strict=True)
        ]
        write_jsonl(run.generations, rows)
        scores = {**labels, "decoder": run.decoder, "sample": run.sample, **score_generations(rows, table, scoring, tokenizer.unk_token_id)}
        write_json(run.scores, scores)
