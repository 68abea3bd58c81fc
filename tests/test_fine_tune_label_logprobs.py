"""Fine-tuning reads the recurrent copy models' reference-token log-probabilities from their output layer's
rows at the labels (training/label_logprobs.py) instead of a log-softmax over the [B, T, V] table: the same
loss and gradients, to float tolerance, as the table path, for GOLD-s (the lagged policy and the rewards
included), for the control and with label smoothing (which reads the table), train mode with dropout; and
through FineTuneTrainer.compute_loss, whose helpers are copies of the policy. Where the loss reads no
whole distribution, the forward builds no table at all: the same updates bit for bit."""

from types import SimpleNamespace

import pytest
import torch
from settings import objective_settings
from test_gold_trainer import make_trainer
from test_objective_catalog import required_values
from test_recurrent_teacher_forcing import assert_same_gradients, gradients, setup
from test_token_statistics import Catching
from transformers import Seq2SeqTrainingArguments

from gold_textgen.catalog import LOSSES as CATALOG
from gold_textgen.data.tokenization import train_tokenizer
from gold_textgen.models.input_contract import WITHOUT_TABLE
from gold_textgen.objectives.loss_truncation import LossTruncation
from gold_textgen.objectives.table import TokenBatch
from gold_textgen.objectives.weighted_nll import reference_logprobs, weighted_nll, weighted_reference_nll
from gold_textgen.training.helper_models import model_from_weights
from gold_textgen.training.label_logprobs import helper_reference_logprobs, policy_token_batch, with_labels_if_read_cheaply
from gold_textgen.training.mle import MleTrainer
from gold_textgen.training.objective_loss import objective_terms
from gold_textgen.training.objective_settings import ObjectiveSettings
from gold_textgen.training.token_statistics import TokenStatistics


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


@pytest.mark.parametrize("architecture", ["nqg_pp", "pointer_generator"])
def test_a_forward_without_the_table_gives_the_same_loss_and_the_tables_statistics(architecture):
    """`return_logits=False`: no [B, T, V] table, the loss and the labels' log-likelihoods bit for bit as
    with it (the same dropout draws), and the entropies and top ids the table gives."""
    model, batch = setup(architecture, dropout=0.3)
    model.train()
    torch.manual_seed(5)
    with_table = model(**batch)
    torch.manual_seed(5)
    without = model(**batch, **WITHOUT_TABLE)
    assert without.logits is None and with_table.token_entropies is None
    assert torch.equal(without.loss, with_table.loss)
    assert torch.equal(without.label_log_likelihoods, with_table.label_log_likelihoods)
    assert_same_gradients(gradients(without.loss, model), gradients(with_table.loss, model))
    labels = batch["labels"]
    from_table, from_statistics = Catching(), Catching()
    from_table.record_tokens(with_table.logits, labels, normalise=True)
    from_statistics.record_outputs(without, labels)
    from_table.log({"loss": 1.0})
    from_statistics.log({"loss": 1.0})
    assert from_statistics.logged["entropy"] == pytest.approx(from_table.logged["entropy"], rel=1e-5)
    assert from_statistics.logged["mean_token_accuracy"] == from_table.logged["mean_token_accuracy"]


@pytest.mark.parametrize(
    "objective",
    [dict(loss="gold", reward="s", rewards="online", label_smoothing=0.0), dict(loss="nll", label_smoothing=0.0)],
    ids=["gold_s", "control"],
)
def test_the_trainer_skips_the_table_where_the_loss_reads_none_with_the_same_updates(objective, tmp_path, monkeypatch):
    """FineTuneTrainer.compute_loss with the policy and pi_tilde asked for no table: the same loss and
    gradients, bit for bit, as when the table is built, and the same token statistics in the log."""
    model, batch = setup("nqg_pp", dropout=0.3)
    words = train_tokenizer(["a b c d e"], copy_slots=3)
    settings = objective_settings(**objective)
    assert not settings.reads_distribution
    results = {}
    for table in (False, True):
        monkeypatch.setattr(ObjectiveSettings, "reads_distribution", property(lambda self, table=table: table))
        trainer = make_trainer(tmp_path, model, words, settings, frozen_model=model_from_weights(model))
        model.train()
        torch.manual_seed(11)
        loss, outputs = trainer.compute_loss(model, dict(batch), return_outputs=True)
        assert (outputs.logits is not None) == table
        logged = Catching()
        logged._token_statistics = trainer._token_statistics
        TokenStatistics.log(logged, {"loss": 1.0})
        results[table] = loss, gradients(loss, model), logged.logged
    (loss, grads, logged), (table_loss, table_grads, table_logged) = results[False], results[True]
    assert torch.equal(loss, table_loss)
    for mine, theirs in zip(grads, table_grads, strict=True):
        assert (mine is None and theirs is None) or torch.equal(mine, theirs)
    assert logged["entropy"] == pytest.approx(table_logged["entropy"], rel=1e-5)
    assert logged["mean_token_accuracy"] == table_logged["mean_token_accuracy"]


def test_the_losses_that_read_no_distribution_never_touch_the_table():
    """Every catalog row whose needs lack `distribution` computes its loss from a batch without the
    [B, T, V] table (a forward asked for none gives none); the others say they read it."""
    generator = torch.Generator().manual_seed(0)
    labels = torch.tensor([[1, 2, 3, -100], [4, 5, 6, 0]])
    reference = torch.log_softmax(torch.randn(2, 4, 7, generator=generator), -1).gather(-1, labels.clamp_min(0).unsqueeze(-1)).squeeze(-1)
    for name, row in CATALOG.items():
        settings = objective_settings(loss=name, **required_values(row))
        if settings.reads_distribution or "sampling" in settings.needs:
            continue
        batch = TokenBatch(logprobs=None, reference=reference, mask=labels.ne(-100), lagged=reference - 0.1, mle=reference - 0.2)
        terms = objective_terms(batch, labels, settings, state=SimpleNamespace(truncation=LossTruncation(0.1, 0, 4)))
        assert torch.isfinite(terms.loss_sum), name
    for name in ("gem", "eaft", "asft"):
        assert objective_settings(loss=name).reads_distribution
    assert objective_settings(loss="nll", label_smoothing=0.1).reads_distribution


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_the_mle_trainer_skips_the_table_unless_it_smooths_labels(smoothing, tmp_path):
    """MleTrainer.compute_loss: the recurrent model's own loss without the table (bit for bit the loss of
    a forward with it), the token statistics still logged; the Trainer's label smoother reads the table."""
    model, batch = setup("nqg_pp", dropout=0.3)
    words = train_tokenizer(["a b c d e"], copy_slots=3)
    arguments = Seq2SeqTrainingArguments(
        output_dir=str(tmp_path), report_to="none", use_cpu=True, remove_unused_columns=False, label_smoothing_factor=smoothing
    )
    trainer = MleTrainer(model=model, args=arguments, processing_class=words)
    model.train()
    torch.manual_seed(2)
    loss, outputs = trainer.compute_loss(model, dict(batch), return_outputs=True)
    assert (outputs.logits is None) == (smoothing == 0.0)
    if not smoothing:
        torch.manual_seed(2)
        assert torch.equal(loss, model(**batch).loss)
    assert float(trainer._token_statistics["tokens"]) == float(batch["labels"].ne(-100).sum())
