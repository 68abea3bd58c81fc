"""The copy mixture in log space (copy_attention.CopyDistribution) against its definition in probability
space, on random rows with words held at several source positions, out-of-vocabulary placeholders, padding
and probabilities below the floor: the full table, the targets' log-likelihoods and the gradients of both."""

import pytest
import torch

from gold_textgen.models.copy_attention import TINY, CopyDistribution, first_occurrences, sigmoid_tanh

WORDS, SLOTS, POSITIONS, ROWS = 12, 4, 7, 9


def by_definition(logits, attention, source_ids, generate_logit, size):
    """log max(p, TINY), p = g softmax(z) + (1 - g) * attention scattered onto the source ids."""
    vocabulary = torch.softmax(logits, dim=-1)
    probs = vocabulary.new_zeros(vocabulary.shape[0], size)
    if generate_logit is None:
        probs[:, :WORDS] = vocabulary
    else:
        share = torch.sigmoid(generate_logit)
        probs[:, :WORDS] = share * vocabulary
        probs = probs.scatter_add(1, source_ids, (1 - share) * attention)
    return probs.clamp_min(TINY).log()


def inputs(copy: bool):
    generator = torch.Generator().manual_seed(0)
    logits = (torch.randn(ROWS, WORDS, generator=generator) * 6).requires_grad_()
    logits.data[0, 3] = -80.0  # a word below the floor
    attention_logits = torch.randn(ROWS, POSITIONS, generator=generator).requires_grad_()
    source_ids = torch.randint(0, WORDS + SLOTS, (ROWS, POSITIONS), generator=generator)
    source_ids[:, 1] = source_ids[:, 4]  # a word held twice in every row
    source_ids[:, -1] = 0  # padding: no attention
    generate_logit = torch.randn(ROWS, 1, generator=generator).requires_grad_() if copy else None
    targets = torch.randint(0, WORDS + SLOTS, (ROWS,), generator=generator)
    targets[:3] = source_ids[:3, 1]  # held twice
    targets[3] = -100  # an ignored label
    return logits, attention_logits, source_ids, generate_logit, targets


def assert_same_gradients(ours, expected):
    for mine, theirs in zip(ours, expected, strict=True):
        assert (mine is None) == (theirs is None)
        if mine is not None:
            assert torch.allclose(mine, theirs, atol=1e-5)


def ours_of(logits, attention_logits, source_ids, generate_logit) -> CopyDistribution:
    first = first_occurrences(source_ids)
    return CopyDistribution(logits, attention_of(attention_logits), source_ids, first, generate_logit, WORDS + SLOTS)


def attention_of(attention_logits):
    return torch.softmax(attention_logits.masked_fill(torch.arange(POSITIONS) == POSITIONS - 1, float("-inf")), dim=-1)


@pytest.mark.parametrize("copy", [True, False])
def test_log_space_mixture_equals_the_definition(copy):
    logits, attention_logits, source_ids, generate_logit, targets = inputs(copy)
    leaves = [tensor for tensor in (logits, attention_logits, generate_logit) if tensor is not None]
    probe = torch.randn(ROWS, WORDS + SLOTS, generator=torch.Generator().manual_seed(1))  # a random upstream gradient

    expected = by_definition(logits, attention_of(attention_logits), source_ids, generate_logit, WORDS + SLOTS)
    expected_gradients = torch.autograd.grad((expected * probe).sum(), leaves, allow_unused=True)
    distribution = CopyDistribution(
        logits, attention_of(attention_logits), source_ids, first_occurrences(source_ids), generate_logit, WORDS + SLOTS
    )
    ours = distribution.log_probs()
    gradients = torch.autograd.grad((ours * probe).sum(), leaves, allow_unused=True)
    assert torch.allclose(ours, expected, atol=1e-5)
    assert_same_gradients(gradients, expected_gradients)

    kept = targets.ne(-100)
    expected = by_definition(logits, attention_of(attention_logits), source_ids, generate_logit, WORDS + SLOTS)
    expected_targets = expected.gather(1, targets.clamp_min(0).unsqueeze(1)).squeeze(1)[kept]
    expected_gradients = torch.autograd.grad(expected_targets.sum(), leaves, allow_unused=True)
    distribution = CopyDistribution(
        logits, attention_of(attention_logits), source_ids, first_occurrences(source_ids), generate_logit, WORDS + SLOTS
    )
    ours_targets = distribution.log_likelihood(targets)[kept]
    gradients = torch.autograd.grad(ours_targets.sum(), leaves, allow_unused=True)
    assert torch.allclose(ours_targets, expected_targets, atol=1e-5)
    assert_same_gradients(gradients, expected_gradients)


def test_the_attentions_tanh_is_tanh_to_a_float_rounding_with_its_gradient():
    """sigmoid_tanh (2 sigmoid(2x) - 1, tanh's backward): within two float32 roundings of torch.tanh
    over the range an attention's energies take, and its gradient tanh's, checked numerically in float64."""
    x = torch.linspace(-12, 12, 20001)
    assert (sigmoid_tanh(x) - torch.tanh(x)).abs().max() <= 2.5e-7
    assert sigmoid_tanh(torch.tensor([0.0, 40.0, -40.0])).tolist() == [0.0, 1.0, -1.0]
    wide = torch.randn(3, 4, 5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(sigmoid_tanh, (wide,))
    (ours,) = torch.autograd.grad(sigmoid_tanh(wide).sum(), wide)
    (theirs,) = torch.autograd.grad(torch.tanh(wide).sum(), wide)
    assert torch.allclose(ours, theirs, atol=1e-12)


@pytest.mark.parametrize("copy", [True, False])
def test_entropies_and_top_are_those_of_the_table(copy):
    """The training log's entropy and most likely id, worked out from the distribution's pieces, equal
    the entropy and argmax of the table by definition (to float rounding), the top being a copied
    placeholder in some rows and a generated word in others."""
    logits, attention_logits, source_ids, generate_logit, _ = inputs(copy)
    if copy:
        attention_logits.data[:2, 2] = 30.0  # rows whose mass is copied: their top is a source word
        source_ids[0, 2] = WORDS + 1  # a placeholder
        generate_logit.data[:2] = -4.0
    expected = by_definition(logits, attention_of(attention_logits), source_ids, generate_logit, WORDS + SLOTS)
    entropies, top = ours_of(logits, attention_logits, source_ids, generate_logit).entropies_and_top()
    assert torch.allclose(
        entropies, -(expected.exp() * expected).sum(-1) / expected.exp().sum(-1) + expected.exp().sum(-1).log(), atol=1e-5
    )
    assert top.tolist() == expected.argmax(-1).tolist()
    if copy:
        assert top[0] == WORDS + 1 and top[1] == source_ids[1, 2] and (top[2:] < WORDS).any()


@pytest.mark.parametrize("copy", [True, False])
def test_a_projected_loss_takes_its_gradient_to_the_readout_and_the_weight(copy):
    """Given the logits' inputs (readout @ weight.T, a tied output layer), the targets' log-likelihoods take
    their gradient to the readout and the weight without the logits' table (projected_log_softmax.py): the
    values and every gradient equal those through autograd of the definition, and the training log's
    entropies, read then from the softmax-weighted mean embedding, those of the table."""
    _, attention_logits, source_ids, generate_logit, targets = inputs(copy)
    generator = torch.Generator().manual_seed(2)
    readout = torch.randn(ROWS, 5, generator=generator).requires_grad_()
    weight = (torch.randn(WORDS, 5, generator=generator) * 2).requires_grad_()
    leaves = [tensor for tensor in (readout, weight, attention_logits, generate_logit) if tensor is not None]
    kept = targets.ne(-100)

    expected = by_definition(readout @ weight.t(), attention_of(attention_logits), source_ids, generate_logit, WORDS + SLOTS)
    expected_targets = expected.gather(1, targets.clamp_min(0).unsqueeze(1)).squeeze(1)[kept]
    expected_gradients = torch.autograd.grad(expected_targets.sum(), leaves, allow_unused=True)
    distribution = CopyDistribution(
        readout @ weight.t(), attention_of(attention_logits), source_ids, first_occurrences(source_ids), generate_logit,
        WORDS + SLOTS, readout, weight,
    )  # fmt: skip
    ours_targets = distribution.log_likelihood(targets)[kept]
    assert "mean_output_embedding" in distribution.__dict__  # the projected path ran
    gradients = torch.autograd.grad(ours_targets.sum(), leaves, allow_unused=True)
    assert torch.allclose(ours_targets, expected_targets, atol=1e-5)
    assert_same_gradients(gradients, expected_gradients)
    entropies, top = distribution.entropies_and_top()
    expected = expected.detach()
    assert torch.allclose(
        entropies, -(expected.exp() * expected).sum(-1) / expected.exp().sum(-1) + expected.exp().sum(-1).log(), atol=1e-5
    )
    assert top.tolist() == expected.argmax(-1).tolist()
