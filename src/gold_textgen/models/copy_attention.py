"""The pieces the recurrent copy models share: additive attention (with coverage) and the copy mixture
over the source-extended vocabulary.

The output distribution of a copy model covers the generator's vocabulary V plus the tokenizer's copy
placeholders (see data/copy_vocabulary.py: the k-th distinct out-of-vocabulary word of a source is the
placeholder k). This is See et al. (2017)'s extended vocabulary: a word of V gets its generation mass plus
the attention on every source position that holds it; a source word outside V gets attention mass only.
"""

from __future__ import annotations

import torch
from torch import nn

TINY = 1e-12  # the floor of a probability before its log (FocusSeq2Seq adds the same constant)


class AdditiveAttention(nn.Module):
    """Bahdanau attention e_i = v . tanh(W_h h_i + W_s s + [w_c c_i] + b), softmax over the valid source
    positions; with coverage, c_i is the attention position i received at earlier steps (See et al. 2017)."""

    def __init__(self, encoder_size: int, state_size: int, attention_size: int, coverage: bool):
        super().__init__()
        self.keys = nn.Linear(encoder_size, attention_size, bias=False)
        self.query = nn.Linear(state_size, attention_size, bias=False)
        self.coverage = nn.Linear(1, attention_size, bias=False) if coverage else None
        self.bias = nn.Parameter(torch.zeros(attention_size))
        self.energy = nn.Linear(attention_size, 1, bias=False)

    def forward(self, keys: torch.Tensor, state: torch.Tensor, valid: torch.Tensor, coverage: torch.Tensor | None) -> torch.Tensor:
        """Attention weights [N, S] from the projected encoder outputs `keys` [N, S, A] (`self.keys`
        applied once per source), the decoder state [N, state_size] and the valid positions [N, S]."""
        hidden = keys + self.query(state).unsqueeze(1) + self.bias
        if self.coverage is not None:
            hidden = hidden + self.coverage(coverage.unsqueeze(-1))
        energy = self.energy(torch.tanh(hidden)).squeeze(-1)
        return torch.softmax(energy.masked_fill(~valid, float("-inf")), dim=-1)


def copy_mixture(
    generation_logits: torch.Tensor, attention: torch.Tensor, source_ids: torch.Tensor, generate_share: torch.Tensor | None, size: int
) -> torch.Tensor:
    """log p(w) over the extended vocabulary [N, size]:

        p(w) = g * softmax(generation_logits)(w) + (1 - g) * sum_{i: source_ids[i] = w} attention[i]

    with g = `generate_share` [N, 1] (None: no copying, p = the generator's softmax). The generator covers
    the first generation_logits.shape[-1] ids; the copy placeholders after them get copy mass only.
    Probabilities are floored at TINY before the log, so slots that no source position holds keep a finite
    log-probability (search masks them; training never targets them).
    """
    vocabulary = torch.softmax(generation_logits.float(), dim=-1)
    probs = vocabulary.new_zeros(vocabulary.shape[0], size)
    if generate_share is None:
        probs[:, : vocabulary.shape[-1]] = vocabulary
    else:
        probs[:, : vocabulary.shape[-1]] = generate_share * vocabulary
        probs = probs.scatter_add(1, source_ids, (1 - generate_share) * attention.float())
    return probs.clamp_min(TINY).log()
