"""ASFT, PSFT, iw-SFT, the probability family and EAFT: each pure function against a separate loop over
its formula (known values on hand-made tensors), then each loss in the trainer against those functions on
a tiny model's batch."""

import math

import pytest
import torch
from settings import objective_settings, tiny_transformer_batch
from transformers import Seq2SeqTrainingArguments

from gold_textgen.catalog import COMMON_SETTINGS
from gold_textgen.catalog import LOSSES as CATALOG
from gold_textgen.config.schema import load_schema
from gold_textgen.objectives.anchored import anchor_kl_sum
from gold_textgen.objectives.entropy_weighting import entropy_weights
from gold_textgen.objectives.importance_weighted import sequence_importance_weights
from gold_textgen.objectives.probability_family import probability_family_sum
from gold_textgen.objectives.proximal import clipped_surrogate_sum
from gold_textgen.objectives.table import LOSSES
from gold_textgen.objectives.weighted_nll import reference_logprobs
from gold_textgen.training.fine_tune_trainer import FineTuneTrainer
from gold_textgen.training.helper_models import HelperModels, model_from_weights

MASK = torch.tensor([[True, True, True], [True, True, False]])


def random_logprobs(seed: int, shape=(2, 3, 5)) -> torch.Tensor:
    return torch.log_softmax(torch.randn(shape, generator=torch.Generator().manual_seed(seed)), dim=-1)


def real_positions():
    return [(b, t) for b in range(MASK.shape[0]) for t in range(MASK.shape[1]) if MASK[b, t]]


def test_asft_anchor_is_the_kl_from_the_frozen_model_to_the_policy():
    policy, anchor = random_logprobs(1), random_logprobs(2)
    expected = sum(sum(math.exp(anchor[b, t, v]) * (anchor[b, t, v] - policy[b, t, v]) for v in range(5)) for b, t in real_positions())
    assert float(anchor_kl_sum(policy, anchor, MASK)) == pytest.approx(float(expected), rel=1e-6)
    assert float(anchor_kl_sum(anchor, anchor, MASK)) == pytest.approx(0.0, abs=1e-6)  # no pull at the anchor itself


def test_psft_is_the_clipped_surrogate_with_advantage_one_and_its_gradient_is_cut_above_the_range():
    old = torch.log(torch.tensor([[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]))
    new = torch.log(torch.tensor([[0.2, 0.5, 0.9], [0.45, 0.7, 0.1]])).requires_grad_()
    total = clipped_surrogate_sum(new, old, MASK, clip_low=0.2, clip_high=0.28)
    ratios = {(b, t): math.exp(float(new[b, t].detach() - old[b, t])) for b, t in real_positions()}
    expected = sum(-min(r, min(max(r, 0.8), 1.28)) for r in ratios.values())
    assert float(total.detach()) == pytest.approx(expected, rel=1e-6)
    total.backward()
    for (b, t), r in ratios.items():  # d/dlog pi of -min(r, clip(r)) = -r while r <= 1 + eps_high, else 0
        assert float(new.grad[b, t]) == pytest.approx(-r if r <= 1.28 else 0.0, rel=1e-6, abs=1e-9)
    assert float(new.grad[1, 2]) == 0.0  # padding


def test_iw_sft_weights_each_sequence_by_its_clipped_mean_log_ratio():
    policy = torch.log(torch.tensor([[0.9, 0.8, 0.7], [0.1, 0.2, 0.9]]))
    reference = torch.log(torch.tensor([[0.3, 0.4, 0.7], [0.5, 0.5, 0.01]]))
    weights = sequence_importance_weights(policy, reference, MASK, temperature=1.0, max_weight=16.0)
    for b, length in ((0, 3), (1, 2)):
        mean = sum(float(policy[b, t] - reference[b, t]) for t in range(length)) / length
        assert float(weights[b, 0]) == pytest.approx(min(math.exp(mean), 16.0), rel=1e-6)
        assert torch.all(weights[b] == weights[b, 0])  # one weight per sequence
    big = sequence_importance_weights(policy, reference, MASK, temperature=10.0, max_weight=16.0)
    assert float(big[0, 0]) == 16.0  # clamped


def test_the_probability_family_value_and_its_gradient():
    reference = torch.log(torch.tensor([[0.9, 0.5, 0.1], [0.3, 0.7, 0.2]])).requires_grad_()
    for alpha in (1.0, 0.5, 2.0):
        total = probability_family_sum(reference, MASK, alpha)
        expected = sum((1 - math.exp(alpha * float(reference[b, t].detach()))) / alpha for b, t in real_positions())
        assert float(total.detach()) == pytest.approx(expected, rel=1e-6)
        (gradient,) = torch.autograd.grad(total, reference)
        for b, t in real_positions():  # -p^alpha: the NLL's gradient weighted by p^alpha (alpha 1: DFT's weight p)
            assert float(gradient[b, t]) == pytest.approx(-math.exp(alpha * float(reference[b, t].detach())), rel=1e-6)
    near_mle = torch.autograd.grad(probability_family_sum(reference, MASK, 1e-4), reference)[0]
    assert torch.allclose(near_mle[MASK], torch.full((5,), -1.0), atol=1e-3)  # alpha -> 0: -log p
    above = probability_family_sum(reference, MASK, 1.0, threshold=0.5, side="above")
    below = probability_family_sum(reference, MASK, 1.0, threshold=0.5, side="below")
    # the reference averages over the kept tokens: sum over the 3 kept of 5 real tokens, times 5 / 3, so that
    # the trainer's division by the 5 real tokens gives the kept tokens' mean
    assert float(above.detach()) == pytest.approx(((1 - 0.9) + (1 - 0.5) + (1 - 0.7)) * 5 / 3, rel=1e-6)
    assert float(below.detach()) == pytest.approx(((1 - 0.5) + (1 - 0.1) + (1 - 0.3)) * 5 / 3, rel=1e-6)
    nothing = probability_family_sum(reference, MASK, 1.0, threshold=0.95, side="above")
    assert float(nothing.detach()) == 0.0  # no token kept: no loss (and no division by zero)


def test_eaft_weights_are_the_normalised_top_k_entropy():
    logits = torch.randn(2, 3, 30, generator=torch.Generator().manual_seed(3))
    weights = entropy_weights(torch.log_softmax(logits, -1), top_k=20, normaliser=3.0, alpha=2.0)
    for b in range(2):
        for t in range(3):
            top = sorted(logits[b, t].tolist(), reverse=True)[:20]
            total = sum(math.exp(x) for x in top)
            entropy = -sum(math.exp(x) / total * math.log(math.exp(x) / total) for x in top)
            assert float(weights[b, t]) == pytest.approx((entropy / 3.0) ** 2, rel=1e-5)
    assert not weights.requires_grad
    sure = torch.log_softmax(torch.tensor([[[30.0] + [0.0] * 29]]), -1)
    assert float(entropy_weights(sure)) < 1e-6  # a confident position is (nearly) not trained on


def test_asft_kl_in_the_papers_direction_is_the_kl_from_the_policy_to_the_anchor():
    policy, anchor = random_logprobs(1), random_logprobs(2)
    expected = sum(sum(math.exp(policy[b, t, v]) * (policy[b, t, v] - anchor[b, t, v]) for v in range(5)) for b, t in real_positions())
    assert float(anchor_kl_sum(policy, anchor, MASK, "policy_to_anchor")) == pytest.approx(float(expected), rel=1e-6)
    assert float(anchor_kl_sum(policy, anchor, MASK, "policy_to_anchor")) != pytest.approx(
        float(anchor_kl_sum(policy, anchor, MASK)), rel=1e-3
    )
    with pytest.raises(ValueError, match="direction"):
        anchor_kl_sum(policy, anchor, MASK, "forward")


def test_every_loss_has_a_table_entry_and_its_settings_in_the_schema():
    objective = load_schema()["$defs"]["objective"]
    assert set(objective["properties"]["loss"]["enum"]) == set(LOSSES) == set(CATALOG)
    used = {key for row in CATALOG.values() for key in row.settings} | {"loss"} | set(COMMON_SETTINGS)
    assert used == set(objective["properties"])  # every setting belongs to some loss, and exists


# --- the trainer -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny():
    tokenizer, (model, other), batch = tiny_transformer_batch(models=2)  # other: a different frozen model
    return tokenizer, model, model_from_weights(other), batch


def trainer_loss(tmp_path, tokenizer, model, frozen, batch, **settings) -> torch.Tensor:
    arguments = Seq2SeqTrainingArguments(output_dir=str(tmp_path), report_to="none", use_cpu=True, remove_unused_columns=False)
    trainer = FineTuneTrainer(
        model=model,
        args=arguments,
        processing_class=tokenizer,
        # pi_old / pi_tilde and the frozen MLE model / the anchor: another model, so the ratio is not 1
        helpers=HelperModels(objective_settings(label_smoothing=0.0, rewards="online", **settings), lagged=frozen, frozen=frozen),
    )
    model.train()
    with torch.no_grad():
        return trainer.compute_loss(model, dict(batch))


def by_hand(model, frozen, batch):
    inputs = {k: v for k, v in batch.items() if k != "labels"}
    labels = batch["labels"]
    with torch.no_grad():
        policy = torch.log_softmax(model(**inputs).logits.float(), -1)
        other = torch.log_softmax(frozen(**inputs).logits.float(), -1)
    mask = labels.ne(-100)
    return policy, other, reference_logprobs(policy, labels), reference_logprobs(other, labels), mask


@pytest.mark.parametrize("loss", ["asft", "psft", "iw_sft", "probability", "eaft"])
def test_the_trainer_loss_is_the_objective_computed_by_hand(tiny, tmp_path, loss):
    tokenizer, model, frozen, batch = tiny
    policy, other, own, others, mask = by_hand(model, frozen, batch)
    nll, n = -own, mask.sum()
    expected = {
        "asft": ((own.exp() * nll)[mask].sum() + 0.1 * anchor_kl_sum(policy, other, mask)) / n,
        "psft": clipped_surrogate_sum(own, others, mask, 0.2, 0.28) / n,
        "iw_sft": (sequence_importance_weights(own, others, mask, 1.0, 16.0) * nll)[mask].sum() / n,
        "probability": probability_family_sum(own, mask, 1.0) / n,
        "eaft": (entropy_weights(policy) * nll)[mask].sum() / n,
    }[loss]
    assert torch.allclose(trainer_loss(tmp_path, tokenizer, model, frozen, batch, loss=loss), expected, rtol=1e-5)
