"""GEM (Li et al. 2025), added through the catalog alone: its loss against the authors' formula written on
logits (select the real tokens, detached generator and weights, mean), its value in a known case, its
gradient, and the workflow trainer's loss on a batch."""

import math

import pytest
import torch
from settings import objective_settings

from gold_textgen.objectives.gem import gem_sum
from gold_textgen.objectives.table import LOSSES, TokenBatch
from gold_textgen.objectives.weighted_nll import reference_logprobs
from gold_textgen.training.objective_loss import objective_terms

LABELS = torch.tensor([[1, 4, 2, 0], [3, 3, -100, -100]])


def authors_formula(logits: torch.Tensor, labels: torch.Tensor, beta: float, h: str) -> torch.Tensor:
    """The reference's computation, step by step on the logits of the real tokens (mean over them)."""
    mask = labels != -100
    logits, labels = logits[mask], labels[mask]
    with torch.no_grad():
        gap = logits - logits.gather(-1, labels.unsqueeze(-1))
        weights = torch.ones_like(gap) if h == "linear" else torch.sigmoid(0.01 * gap)
        q = torch.softmax(logits / beta, dim=-1)
    log_probs = torch.log_softmax(logits, dim=-1)
    on_label = log_probs.gather(-1, labels.unsqueeze(-1))
    return -(q * weights * (on_label - log_probs)).sum(-1).mean()


@pytest.mark.parametrize(("beta", "h"), [(0.7, "linear"), (0.7, "log_sigmoid"), (2.0, "linear")])
def test_gem_equals_the_authors_formula_in_value_and_gradient(beta, h):
    logits = (3 * torch.randn(2, 4, 6, generator=torch.Generator().manual_seed(0))).requires_grad_()
    expected = authors_formula(logits, LABELS, beta, h)
    (expected_grad,) = torch.autograd.grad(expected, logits)
    logprobs = torch.log_softmax(logits, -1)
    mask = LABELS.ne(-100)
    ours = gem_sum(logprobs, reference_logprobs(logprobs, LABELS), mask, beta, h) / mask.sum()
    (grad,) = torch.autograd.grad(ours, logits)
    assert float(ours) == pytest.approx(float(expected), rel=1e-6)
    assert torch.allclose(grad, expected_grad, atol=1e-7)
    assert float(grad[1, 2:].abs().sum()) == 0.0  # padding gets no gradient


def test_gem_with_beta_one_is_cross_entropy_minus_entropy():
    probs = torch.tensor([[0.5, 0.25, 0.25]])
    logprobs = probs.log().unsqueeze(0)  # one sequence, one token
    value = gem_sum(logprobs, logprobs[..., 0], torch.tensor([[True]]), beta=1.0)
    entropy = -sum(p * math.log(p) for p in (0.5, 0.25, 0.25))
    assert float(value) == pytest.approx(-math.log(0.5) - entropy, rel=1e-6)


def test_gem_through_the_catalog_is_its_loss_without_label_smoothing():
    settings = objective_settings(loss="gem")
    assert settings.label_smoothing == 0.0 and settings.beta == 0.7 and settings.h == "linear"  # the reference's defaults
    logprobs = torch.log_softmax(torch.randn(2, 4, 6, generator=torch.Generator().manual_seed(1)), -1).requires_grad_()
    batch = TokenBatch(logprobs=logprobs, reference=reference_logprobs(logprobs, LABELS), mask=LABELS.ne(-100))
    terms = objective_terms(batch, LABELS, settings, state=None)
    assert torch.allclose(terms.loss_sum, gem_sum(logprobs, batch.reference, batch.mask), rtol=1e-6)
    assert LOSSES["gem"].extra is not None and torch.all(terms.weights == 0)  # the loss is its own term
    with pytest.raises(ValueError, match="h must be"):
        gem_sum(logprobs, batch.reference, batch.mask, h="cubic")
