"""What a standard model's forward returns (recurrent.py): the log-distribution over the source-extended
vocabulary, and what a copy model adds beside it for its losses and its training log."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers.modeling_outputs import Seq2SeqLMOutput


@dataclass
class CopySeq2SeqOutput(Seq2SeqLMOutput):
    """Seq2SeqLMOutput whose `logits` are log-probabilities over the extended vocabulary, plus the coverage
    loss of every decoder step [B, T] (pointer-generator with coverage; None otherwise) and, when the call
    had labels, their log-probabilities [B, T] (0 where a label is -100); asked for, the entropy of each
    position's distribution and its most likely id [B, T] (without gradient: what a training log reports)."""

    coverage_losses: torch.FloatTensor | None = None
    label_log_likelihoods: torch.FloatTensor | None = None
    token_entropies: torch.FloatTensor | None = None
    top_tokens: torch.LongTensor | None = None
