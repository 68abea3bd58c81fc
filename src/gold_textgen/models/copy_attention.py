"""The pieces the recurrent copy models share: additive attention (with coverage) and the copy mixture
over the source-extended vocabulary.

The output distribution of a copy model covers the generator's vocabulary V plus the tokenizer's copy
placeholders (see data/copy_vocabulary.py: the k-th distinct out-of-vocabulary word of a source is the
placeholder k). This is See et al. (2017)'s extended vocabulary: a word of V gets its generation mass plus
the attention on every source position that holds it; a source word outside V gets attention mass only.

The mixture is computed in log space: log p(w) = log g + log softmax(z)(w) for every word that no source
position holds (all but a few dozen of the V words), and the mixture proper only at the source positions.
This gives the probability-space definition's numbers (tests/test_copy_distribution.py holds both) without
the passes over the full [N, V] table that a dense scatter of the copy mass costs (zeros, scatter, scale,
clamp, log, and their gradients). The loss reads the targets' log-likelihoods alone, so that its gradient
never passes through the [N, V] table either.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import torch
from torch import nn
from torch.nn.functional import logsigmoid

from .projected_log_softmax import ProjectedTargetLogSoftmax, mean_output_embedding

TINY = 1e-12  # the floor of a probability before its log (FocusSeq2Seq adds the same constant)
LOG_TINY = math.log(TINY)


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

    def project_keys(self, outputs: torch.Tensor) -> torch.Tensor:
        """W_h h_i + b [N, S, A]: the part of every step's energies that depends on the source only."""
        return self.keys(outputs) + self.bias

    def forward(self, keys: torch.Tensor, state: torch.Tensor, valid: torch.Tensor, coverage: torch.Tensor | None) -> torch.Tensor:
        """Attention weights [N, S] from the projected encoder outputs `keys` [N, S, A] (`project_keys`,
        once per source), the decoder state [N, state_size] and the valid positions [N, S]."""
        hidden = keys + self.query(state).unsqueeze(1)
        if self.coverage is not None:
            hidden = hidden + self.coverage(coverage.unsqueeze(-1))
        energy = self.energy(sigmoid_tanh(hidden)).squeeze(-1)
        return torch.softmax(energy.masked_fill(~valid, float("-inf")), dim=-1)


class SigmoidTanh(torch.autograd.Function):
    """tanh(x) as 2 sigmoid(2x) - 1, with tanh's own backward g (1 - y^2). The attention's [N, S, A] tanh is
    the largest elementwise pass of a recurrent decoder step, and torch's CPU tanh kernel takes several
    times as long as this on the same tensor; the two differ by about one float32 rounding
    (tests/test_copy_distribution.py)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        y = torch.sigmoid(x * 2).mul_(2).sub_(1)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        (y,) = ctx.saved_tensors
        return torch.ops.aten.tanh_backward(grad, y)


def sigmoid_tanh(x: torch.Tensor) -> torch.Tensor:
    return SigmoidTanh.apply(x)


def first_occurrences(source_ids: torch.Tensor) -> torch.Tensor:
    """[N, S]: for every source position, the first position of its row that holds the same id (the
    position that carries the copy mass of all of them)."""
    same = source_ids.unsqueeze(2) == source_ids.unsqueeze(1)
    return same.to(torch.uint8).argmax(-1)  # argmax returns the first of equal maxima


@dataclass
class CopyDistribution:
    """The output distribution of a copy model over the extended vocabulary, for N rows:

        p(w) = g * softmax(generation_logits)(w) + (1 - g) * sum_{i: source_ids[i] = w} attention[i]

    with g = sigmoid(generate_logit) [N, 1] (None: no copying, p = the generator's softmax). The generator
    covers the first generation_logits.shape[-1] ids; the copy placeholders after them get copy mass only.
    Probabilities are floored at TINY before the log, so slots that no source position holds keep a finite
    log-probability (search masks them; training never targets them). `first_position` [N, S] is
    `first_occurrences(source_ids)`, computed once per source. With `readout` [N, E] and `projection_weight`
    [V, E], the logits' own inputs (generation_logits = readout @ projection_weight.T), a loss at the labels
    takes its gradient to them directly (projected_log_softmax.py)."""

    generation_logits: torch.Tensor
    attention: torch.Tensor
    source_ids: torch.Tensor
    first_position: torch.Tensor
    generate_logit: torch.Tensor | None
    size: int
    readout: torch.Tensor | None = None
    projection_weight: torch.Tensor | None = None

    def __post_init__(self) -> None:
        self.words = self.generation_logits.shape[-1]
        if self.generate_logit is not None:  # log g and 1 - g [N, 1]
            self.log_generate_share = logsigmoid(self.generate_logit.float())
            self.copy_share = torch.sigmoid(-self.generate_logit.float())

    # The [N, V] tables, each made when first read: the full distribution (decoding, an objective that reads
    # it) reads the log-softmax, with its gradient; a loss at the labels and the training log read the
    # softmax and its normaliser alone (no gradient: TargetLogSoftmax writes the logits' gradient), which
    # saves a training step a pass each way over the largest tensor it has.
    @cached_property
    def log_vocabulary(self) -> torch.Tensor:
        return torch.log_softmax(self.generation_logits.float(), dim=-1)

    @cached_property
    def vocabulary(self) -> torch.Tensor:
        """softmax(z) [N, V], without gradient."""
        return torch.softmax(self.generation_logits.detach().float(), dim=-1)

    @cached_property
    def log_normaliser(self) -> torch.Tensor:
        """log sum exp(z) [N, 1], without gradient: max z - log max softmax(z) (one read of each table)."""
        logits = self.generation_logits.detach().float()
        return logits.amax(-1, keepdim=True) - self.vocabulary.amax(-1, keepdim=True).log()

    @cached_property
    def mean_output_embedding(self) -> torch.Tensor:
        """softmax(z) @ projection_weight [N, E], without gradient."""
        return mean_output_embedding(self.vocabulary, self.projection_weight)

    def log_generated(self) -> torch.Tensor:
        """log(g * softmax(z)) [N, V]."""
        if self.generate_logit is None:
            return self.log_vocabulary
        return self.log_vocabulary + self.log_generate_share

    def copied(self) -> torch.Tensor:
        """(1 - g) * the attention on every position's word, pooled over the positions that hold it [N, S]."""
        pooled = torch.zeros_like(self.attention, dtype=torch.float).scatter_add(1, self.first_position, self.attention.float())
        return self.copy_share * pooled.gather(1, self.first_position)

    def log_probs(self) -> torch.Tensor:
        """log p over the extended vocabulary [N, size]."""
        generated = self.log_generated()
        rows, words = generated.shape
        floor = generated.new_full((rows, self.size - words), LOG_TINY)
        log_probs = torch.cat([generated.clamp_min(LOG_TINY), floor], dim=1)
        if self.generate_logit is None:
            return log_probs
        mixed, first = self.source_mixture(generated.gather(1, self.source_ids.clamp_max(words - 1)))
        # A word held at several positions is written once per position, the same value each time; its
        # gradient must flow once, from its first position.
        return log_probs.scatter_(1, self.source_ids, torch.where(first, mixed, mixed.detach()))

    def source_mixture(self, generated: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(log p of every source position's word [N, S], whether the position is its word's first [N, S])
        from log(g * softmax(z)) at every source position's word (a placeholder's: any number) `generated`."""
        mixed = (generated.exp() * self.sources_in_vocabulary() + self.copied()).clamp_min(TINY).log()
        first = self.first_position == torch.arange(self.source_ids.shape[1], device=self.source_ids.device)
        return mixed, first

    def sources_in_vocabulary(self) -> torch.Tensor:
        return self.source_ids < self.words

    @torch.no_grad()
    def entropies_and_top(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Each row's entropy and most likely id of the extended vocabulary [N], without gradient.

        With copying, from the pieces of the distribution rather than its [N, size] table (which takes
        twice as long to build and read): sums over the generator's softmax and its normaliser, then the source words'
        mixture in place of their generated probability (`tests/test_copy_distribution.py` holds both
        equal to the table's to float rounding; the probabilities the table floors at TINY, some 1e-10 of
        mass, are taken unfloored)."""
        if self.generate_logit is None:
            log_probs = self.log_probs()
            return -(torch.softmax(log_probs, dim=-1) * log_probs).sum(-1), log_probs.argmax(-1)
        words, logits = self.words, self.generation_logits.detach().float()
        log_share = self.log_generate_share.squeeze(1)
        vocabulary, log_normaliser = self.vocabulary, self.log_normaliser.squeeze(1)
        vocabulary_mass = vocabulary.sum(-1)
        if "mean_output_embedding" in self.__dict__:  # sum_v q_v z_v = r . (q W), given q W (the loss's backward needs it)
            expected_logit = torch.linalg.vecdot(self.readout.detach().float(), self.mean_output_embedding)
        else:
            expected_logit = torch.linalg.vecdot(vocabulary, logits)
        expected_log = expected_logit - log_normaliser * vocabulary_mass  # sum q log q, q = softmax(z)
        # Sums over the extended vocabulary of p = exp(log p) and of p log p, before normalising: every word
        # of V at its generated log-probability, every placeholder at the floor ...
        share = log_share.exp()
        mass = share * vocabulary_mass + (self.size - words) * TINY
        weighted = share * (expected_log + log_share * vocabulary_mass) + (self.size - words) * TINY * LOG_TINY
        # ... then each source word (at its first position) at its mixture instead.
        generated = logits.gather(1, self.source_ids.clamp_max(words - 1)) - self.log_normaliser + self.log_generate_share
        replaced = torch.where(self.sources_in_vocabulary(), generated.clamp_min(LOG_TINY), LOG_TINY)
        mixed, first = self.source_mixture(generated)
        mass = mass + ((mixed.exp() - replaced.exp()) * first).sum(-1)
        weighted = weighted + ((mixed.exp() * mixed - replaced.exp() * replaced) * first).sum(-1)
        entropies = mass.log() - weighted / mass
        best_logit, best_word = logits.max(-1)
        best_mixed, best_position = mixed.masked_fill(~first, float("-inf")).max(-1)
        best_source_word = self.source_ids.gather(1, best_position.unsqueeze(1)).squeeze(1)
        top = torch.where(best_mixed >= best_logit - log_normaliser + log_share, best_source_word, best_word)
        return entropies, top

    def log_likelihood(self, targets: torch.Tensor) -> torch.Tensor:
        """log p(targets) [N] (targets [N] of the extended vocabulary; negative ids read as id 0): the
        same numbers as log_probs().gather(targets) without the [N, size] table or its gradient."""
        targets = targets.clamp_min(0)
        in_vocabulary = targets < self.words
        generated = self.target_log_softmax(targets.clamp_max(self.words - 1))
        if self.generate_logit is None:
            return torch.where(in_vocabulary, generated.clamp_min(LOG_TINY), LOG_TINY)
        generated = generated + self.log_generate_share.squeeze(1)
        held = self.source_ids == targets.unsqueeze(1)
        copied = self.copy_share.squeeze(1) * (self.attention.float() * held).sum(-1)
        return (generated.exp() * in_vocabulary + copied).clamp_min(TINY).log()

    def target_log_softmax(self, targets: torch.Tensor) -> torch.Tensor:
        """log softmax(z)[targets] [N] (targets below V), its gradient taken to the readout and the projection
        weight when the distribution has them, else to the logits."""
        if self.projection_weight is not None and torch.is_grad_enabled() and self.generation_logits.requires_grad:
            return ProjectedTargetLogSoftmax.apply(
                self.readout, self.projection_weight, self.generation_logits.detach(), self.vocabulary, self.log_normaliser,
                self.mean_output_embedding, targets,
            )  # fmt: skip
        return TargetLogSoftmax.apply(self.generation_logits, self.vocabulary, self.log_normaliser, targets)


class TargetLogSoftmax(torch.autograd.Function):
    """log_softmax(logits).gather(targets) [N] as logits.gather(targets) - log sum exp(logits), from the softmax
    and its normaliser already computed, with a backward that writes the [N, V] gradient once
    (g * (onehot(target) - softmax)) instead of a scattered one-hot table followed by log_softmax's backward."""

    @staticmethod
    def forward(ctx, logits: torch.Tensor, softmax: torch.Tensor, log_normaliser: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(softmax, targets)
        ctx.logits_dtype = logits.dtype
        return (logits.float().gather(1, targets.unsqueeze(1)) - log_normaliser).squeeze(1)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        softmax, targets = ctx.saved_tensors
        grad = grad.unsqueeze(1)
        logits_grad = torch.mul(softmax, -grad).scatter_add_(1, targets.unsqueeze(1), grad)
        return logits_grad.to(ctx.logits_dtype), None, None, None
