"""The negative log-likelihood of reference tokens under teacher forcing, written once. The token tables
(evaluation/token_nll.py: perplexity, the NLL histograms), the dev loss of the copy models
(recurrent_teacher_forcing.py) and the decoder-only models' loss (prompt_completion.py) read it from here,
so a model's dev loss and its tables agree; tests/test_token_nll.py checks them against each other and
against the loss transformers' own models report."""

from __future__ import annotations

import torch

IGNORED = -100  # a label position that no loss reads (padding, the prompt of a decoder-only model)


def target_nll(scores: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """-log softmax(scores)[target] for each target id [...] from `scores` [..., V] (logits, or a copy
    model's log-distribution, which log_softmax leaves as it is), in float32; 0 where the target is ignored."""
    nll = -torch.log_softmax(scores.float(), dim=-1).gather(-1, targets.clamp_min(0).unsqueeze(-1)).squeeze(-1)
    return nll.masked_fill(targets.eq(IGNORED), 0.0)


def token_mean(per_token: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The mean of a per-token quantity [...] over the positions whose target counts (0 when none does)."""
    counted = targets.ne(IGNORED)
    return per_token[counted].sum() / counted.sum().clamp_min(1)
