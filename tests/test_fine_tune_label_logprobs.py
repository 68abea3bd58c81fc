"""Fine-tuning reads the recurrent copy models' reference-token log-probabilities from their output layer's
rows at the labels (training/label_logprobs.py) instead of a log-softmax over the [B, T, V] table: the same
loss and gradients, to float tolerance, as the table path, for GOLD-s (the lagged policy and the rewards
included), for the control and with label smoothing (which reads the table), train mode with dropout."""

import pytest
import torch
from settings import objective_settings
from test_recurrent_teacher_forcing import assert_same_gradients, gradients, setup

from gold_textgen.objectives.weighted_nll import reference_logprobs, weighted_nll, weighted_reference_nll
from gold_textgen.training.label_logprobs import helper_reference_logprobs, policy_token_batch, with_labels_if_read_cheaply
from gold_textgen.training.objective_loss import objective_terms


def table_path_loss(model, inputs, labels, settings, lagged, mle):
    """The loss as fine-tuning computed it from the log-softmax of the whole table."""
    from gold_textgen.objectives.table import TokenBatch

    logprobs = torch.log_softmax(model(**inputs).logits.float(), dim=-1)
    batch = TokenBatch(logprobs=logprobs, reference=reference_logprobs(logprobs, labels), mask=labels.ne(-100), lagged=lagged, mle=mle)
    terms = objective_terms(batch, labels, settings, state=None)
    weighted = weighted_nll(batch.logprobs, labels, terms.weights, terms.returns, settings.label_smoothing)
    extra = terms.loss_sum - terms.parts.loss_sum
    return weighted.loss_sum + extra


def label_path_loss(model, inputs, labels, settings, lagged, mle):
    batch = policy_token_batch(model(**with_labels_if_read_cheaply(model, inputs, labels)), labels)
    batch.lagged, batch.mle = lagged, mle
    return objective_terms(batch, labels, settings, state=None).loss_sum


@pytest.mark.parametrize("architecture", ["nqg_pp", "pointer_generator"])
@pytest.mark.parametrize(
    "objective",
    [dict(loss="gold", reward="s"), dict(loss="nll"), dict(loss="gold", reward="p", label_smoothing=0.1)],
    ids=["gold_s", "control", "gold_p_smoothed"],
)
def test_the_labels_log_probs_train_as_the_table_did(architecture, objective):
    model, batch = setup(architecture, dropout=0.3)
    model.train()
    labels = batch["labels"]
    inputs = {key: value for key, value in batch.items() if key != "labels"}
    settings = objective_settings(**objective)
    with torch.no_grad():  # the helpers' log-probs of the references: pi_tilde and p_MLE, read by the label path
        lagged = helper_reference_logprobs(model.eval(), inputs, labels, lambda m: torch.log_softmax(m(**inputs).logits, -1))
        mle = (lagged - 0.3).clamp_max(0)
        table = reference_logprobs(torch.log_softmax(model(**inputs).logits, -1), labels)
    assert torch.allclose(lagged, table, atol=1e-6)
    model.train()
    torch.manual_seed(3)
    before = table_path_loss(model, inputs, labels, settings, lagged, mle)
    table_gradients = gradients(before, model)
    torch.manual_seed(3)  # the same dropout masks: the forward with labels draws what it drew without
    after = label_path_loss(model, inputs, labels, settings, lagged, mle)
    assert after.item() == pytest.approx(before.item(), rel=1e-5)
    assert_same_gradients(gradients(after, model), table_gradients)


def test_the_weighted_nll_from_the_reference_log_probs_is_the_tables():
    generator = torch.Generator().manual_seed(0)
    logprobs = torch.log_softmax(torch.randn(2, 5, 7, generator=generator), -1).requires_grad_()
    labels = torch.tensor([[1, 2, 3, -100, -100], [4, 5, 6, 0, 1]])
    weights, returns = torch.rand(2, 5, generator=generator), torch.rand(2, 5, generator=generator)
    for smoothing in (0.0, 0.1):
        table = weighted_nll(logprobs, labels, weights, returns, smoothing)
        reference = reference_logprobs(logprobs, labels)
        ours = weighted_reference_nll(reference, labels, weights, returns, smoothing, lambda: -logprobs.mean(dim=-1))
        assert torch.allclose(ours.loss_sum, table.loss_sum) and torch.equal(ours.num_tokens, table.num_tokens)
        assert torch.allclose(ours.nll_sum, table.nll_sum)
        (mine,) = torch.autograd.grad(ours.loss_sum, logprobs)
        (theirs,) = torch.autograd.grad(table.loss_sum, logprobs)
        assert torch.allclose(mine, theirs)
    with pytest.raises(ValueError, match="whole distribution"):
        weighted_reference_nll(reference, labels, weights, returns, 0.1)
