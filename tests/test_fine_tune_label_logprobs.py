"""Fine-tuning reads the recurrent copy models' reference-token log-probabilities from their output layer's
rows at the labels (training/label_logprobs.py) instead of a log-softmax over the [B, T, V] table: the same
loss and gradients, to float tolerance, as the table path, for GOLD-s (the lagged policy and the rewards
included), for the control and with label smoothing (which reads the table), train mode with dropout; and
through FineTuneTrainer.compute_loss, whose helpers are copies of the policy."""

import pytest
import torch
from settings import objective_settings
from test_gold_trainer import make_trainer
from test_recurrent_teacher_forcing import assert_same_gradients, gradients, setup

from gold_textgen.data.tokenization import train_tokenizer
from gold_textgen.objectives.table import TokenBatch
from gold_textgen.objectives.weighted_nll import reference_logprobs, weighted_nll, weighted_reference_nll
from gold_textgen.training.helper_models import model_from_weights
from gold_textgen.training.label_logprobs import helper_reference_logprobs, policy_token_batch, with_labels_if_read_cheaply
from gold_textgen.training.objective_loss import objective_terms


def table_path_loss(model, inputs, labels, settings, lagged, mle, outputs=None):
    """The loss sum as fine-tuning computed it from the log-softmax of the whole table (of `outputs`, the
    policy's on `inputs` unless given)."""
    logits = (outputs if outputs is not None else model(**inputs)).logits
    logprobs = torch.log_softmax(logits.float(), dim=-1)
    batch = TokenBatch(logprobs=logprobs, reference=reference_logprobs(logprobs, labels), mask=labels.ne(-100), lagged=lagged, mle=mle)
    terms = objective_terms(batch, labels, settings, state=None)
    weighted = weighted_nll(batch.logprobs, labels, terms.weights, terms.returns, settings.label_smoothing)
    extra = terms.loss_sum - terms.parts.loss_sum
    return weighted.loss_sum + extra


def table_logprobs(model, inputs: dict, labels: torch.Tensor) -> torch.Tensor:
    return reference_logprobs(torch.log_softmax(model(**inputs).logits, -1), labels)


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
        table = table_logprobs(model, inputs, labels)
    assert torch.allclose(lagged, table, atol=1e-6)
    model.train()
    torch.manual_seed(3)
    before = table_path_loss(model, inputs, labels, settings, lagged, mle)
    table_gradients = gradients(before, model)
    torch.manual_seed(3)  # the same dropout masks: the forward with labels draws what it drew without
    after = label_path_loss(model, inputs, labels, settings, lagged, mle)
    assert after.item() == pytest.approx(before.item(), rel=1e-5)
    assert_same_gradients(gradients(after, model), table_gradients)


@pytest.mark.parametrize("architecture", ["nqg_pp", "pointer_generator"])
def test_the_trainers_gold_s_loss_is_the_tables(architecture, tmp_path):
    """FineTuneTrainer.compute_loss (the policy called with its labels, pi_tilde and online p_MLE from copies of
    it, the coverage term): GOLD-s's loss and gradients as the table path gives them."""
    model, batch = setup(architecture)
    settings = objective_settings(loss="gold", reward="s", rewards="online")
    words = train_tokenizer(["a b c d e"], copy_slots=3)  # setup's words
    trainer = make_trainer(tmp_path, model, words, settings, frozen_model=model_from_weights(model))
    labels = batch["labels"]
    inputs = {key: value for key, value in batch.items() if key != "labels"}
    model.train()
    through_trainer = trainer.compute_loss(model, dict(batch))
    trainer_gradients = gradients(through_trainer, model)
    with torch.no_grad():
        lagged, mle = (table_logprobs(helper, inputs, labels) for helper in (trainer.helpers.lagged, trainer.helpers.frozen))
    outputs = model(**inputs)
    mask = labels.ne(-100)
    loss_sum = table_path_loss(model, inputs, labels, settings, lagged, mle, outputs)
    expected = (loss_sum + model.coverage_term(outputs.coverage_losses, mask)) / mask.sum()
    assert through_trainer.item() == pytest.approx(expected.item(), rel=1e-5)
    assert_same_gradients(trainer_gradients, gradients(expected, model))


def test_the_weighted_nll_from_the_reference_log_probs_is_the_tables():
    generator = torch.Generator().manual_seed(0)
    logprobs = torch.log_softmax(torch.randn(2, 5, 7, generator=generator), -1).requires_grad_()
    labels = torch.tensor([[1, 2, 3, -100, -100], [4, 5, 6, 0, 1]])
    weights, returns = torch.rand(2, 5, generator=generator), torch.rand(2, 5, generator=generator)
    for smoothing in (0.0, 0.1):
        table = weighted_nll(logprobs, labels, weights, returns, smoothing)
        reference = reference_logprobs(logprobs, labels)
        ours = weighted_reference_nll(reference, labels, weights, returns, smoothing, logprobs)
        assert torch.allclose(ours.loss_sum, table.loss_sum) and torch.equal(ours.num_tokens, table.num_tokens)
        assert torch.allclose(ours.nll_sum, table.nll_sum)
        (mine,) = torch.autograd.grad(ours.loss_sum, logprobs)
        (theirs,) = torch.autograd.grad(table.loss_sum, logprobs)
        assert torch.allclose(mine, theirs)
    with pytest.raises(ValueError, match="whole distribution"):
        weighted_reference_nll(reference, labels, weights, returns, 0.1)
