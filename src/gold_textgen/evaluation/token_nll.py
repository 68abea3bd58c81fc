"""Per-token negative log-likelihood of the references under teacher forcing (the gold history).

One pass per model and split, stored compactly (one row per reference token, EOS included):
`example` (row in the split), `position` (0-based time step), `token_id`, `nll` (nats, float32) and
`correct` (whether the model's argmax at that step is the reference token). Perplexity, the NLL
histograms and accuracy-by-time-step are all computed from this table.

Which positions count: `positions="scored"` (the evaluation jobs, model_evaluation.py) keeps the reference tokens and EOS
only, the positions fairseq's targets have and the paper's perplexity averages over; a label position
before the first reference token (BART's `<s>`, see `leading_target_specials`) is dropped and time steps
count from the first reference token. `positions="labels"` (the reward cache) keeps every label position
the Trainer trains on, so the cache lines up with the training labels.

The copy models (NQG++, the pointer-generator) score each reference token over their source-extended
vocabulary: a word of the vocabulary by its mixed probability (generation plus the attention on the source
positions holding it), an out-of-vocabulary word that the source holds by its copy probability (the
placeholder it is encoded as), and any other out-of-vocabulary word as `<unk>`. That is the loss these
models are trained on (See et al. 2017; FocusSeq2Seq's pointer-generator targets are encoded the same
way), so the perplexity is the one their training reports, which the paper's Table 1 lists for them.
FocusSeq2Seq's NQG++ gives copy mass only to out-of-vocabulary targets; ours also to words of the
vocabulary, so it can only assign a reference a higher probability than that encoding would.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm
from transformers import DataCollatorForSeq2Seq, PreTrainedModel, PreTrainedTokenizerBase

from ..data.checkpoint_tokenizer import model_tokenizer
from ..data.seq2seq_batches import PaddedFieldsCollator, length_sorted_batches, tokenize_records
from ..data.tokenization import leading_target_specials
from ..model_exchange.imported import load_saved_model
from ..models.input_contract import reads_prompt_completion, token_features
from ..models.label_nll import target_nll
from ..runtime.checked_parquet import write_checked_parquet
from ..runtime.files import read_jsonl
from ..runtime.model_process import pick_device

log = logging.getLogger(__name__)
COLUMNS = ("example", "position", "token_id", "nll", "correct")
POSITION_KINDS = ("scored", "labels")


@torch.inference_mode()
def token_nll_table(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    records: Sequence[dict],
    max_source_length: int,
    max_target_length: int,
    batch_size: int,
    skip_leading: int = 0,
    features: Sequence[str] = (),
    causal: bool = False,
) -> pd.DataFrame:
    """The token table; the first `skip_leading` label positions of every reference are left out (a
    decoder-only model's labels hold no BOS: `causal`, data/seq2seq_batches.py)."""
    device = next(model.parameters()).device
    model.eval()
    examples = tokenize_records(records, tokenizer, max_source_length, max_target_length, features, causal=causal)
    collate = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer, model=model))
    parts = []
    batches = list(length_sorted_batches([len(x) for x in examples["labels"]], batch_size))
    for batch in tqdm(batches, desc="token NLL", unit="batch", mininterval=5.0):
        inputs = collate([examples[i] for i in batch]).to(device)
        labels = inputs["labels"]
        mask = labels.ne(-100)
        mask[:, :skip_leading] = False
        # The scored positions' rows alone (row by row, the numbers of the whole table): padding can be
        # half of a [B, T, V] batch.
        logits = model(**inputs).logits[mask].float()
        targets = labels[mask]
        nll = target_nll(logits, targets)
        rows, positions = mask.nonzero(as_tuple=True)
        parts.append(
            pd.DataFrame(
                {
                    "example": np.asarray(batch, dtype=np.int32)[rows.cpu().numpy()],
                    "position": (positions - skip_leading).cpu().numpy().astype(np.int16),
                    "token_id": targets.cpu().numpy().astype(np.int32),
                    "nll": nll.cpu().numpy().astype(np.float32),
                    "correct": logits.argmax(-1).eq(targets).cpu().numpy(),
                }
            )
        )
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(COLUMNS))
    return table.sort_values(["example", "position"], ignore_index=True)


def load_evaluated_model(model_dir: Path):
    """The model saved in a workflow model folder (trained or imported) on this process's device, and its
    tokenizer."""
    tokenizer = model_tokenizer(model_dir)
    return load_saved_model(model_dir, tokenizer).to(pick_device()), tokenizer


def write_token_nll(model_dir: Path, data_path: Path, output_path: Path, task: dict, positions: str = "scored") -> pd.DataFrame:
    if positions not in POSITION_KINDS:
        raise ValueError(f"positions must be one of {', '.join(POSITION_KINDS)}, got '{positions}'")
    model, tokenizer = load_evaluated_model(model_dir)
    return write_token_table(model, tokenizer, read_jsonl(data_path), output_path, task, positions)


def write_token_table(model, tokenizer, records: Sequence[dict], output_path: Path, task: dict, positions: str = "scored") -> pd.DataFrame:
    """The token table of `records` under a loaded model, written to `output_path` (parquet)."""
    causal = reads_prompt_completion(model)
    skip = leading_target_specials(tokenizer) if positions == "scored" and not causal else 0
    if skip:
        log.info("scoring from label position %d: the positions before it are the tokenizer's start tokens", skip)
    batch_size = task["generation"]["batch_size"]
    lengths = (task["max_source_length"], task["max_target_length"])
    table = token_nll_table(model, tokenizer, records, *lengths, batch_size, skip, token_features(model), causal)
    write_checked_parquet(table, output_path)  # its digest, checked by every reader (token_table.py)
    log.info("%s: %d tokens, mean NLL %.4f", output_path, len(table), float(table["nll"].mean()))
    return table
