"""At step 0 the policy equals the frozen models it is compared with, so PSFT's ratio is 1, iw-SFT's
weight is 1 and ASFT's KL is 0, as in their references (fine-tuned without dropout), even on a model that
trains with dropout: the trainer runs the policy's forward without dropout for these losses."""

import pytest
import torch
from settings import objective_settings, tiny_transformer_batch
from transformers import Seq2SeqTrainingArguments

from gold_textgen.objectives.weighted_nll import reference_logprobs
from gold_textgen.training.dropout_state import forward_without_dropout, without_dropout
from gold_textgen.training.fine_tune_trainer import FineTuneTrainer
from gold_textgen.training.helper_models import HelperModels, model_from_weights


@pytest.fixture(scope="module")
def with_dropout():
    tokenizer, (model,), batch = tiny_transformer_batch(dropout=0.3)
    return tokenizer, model, batch


def step_zero(tmp_path, tokenizer, model, batch, **settings):
    """The trainer's loss and logged sums on `batch`, with every helper a frozen copy of the policy."""
    arguments = Seq2SeqTrainingArguments(output_dir=str(tmp_path), report_to="none", use_cpu=True, remove_unused_columns=False)
    objective = objective_settings(rewards="online", **settings)
    trainer = FineTuneTrainer(
        model=model,
        args=arguments,
        processing_class=tokenizer,
        helpers=HelperModels(objective, lagged=model_from_weights(model), frozen=model_from_weights(model)),
    )
    model.train()
    torch.manual_seed(1)  # the dropout masks, where dropout is on
    with torch.no_grad():
        loss = trainer.compute_loss(model, dict(batch))
    return loss, trainer._objective_log


def eval_mode_nll(model, batch):
    inputs = {k: v for k, v in batch.items() if k != "labels"}
    with without_dropout(model), torch.no_grad():
        own = reference_logprobs(torch.log_softmax(model(**inputs).logits.float(), -1), batch["labels"])
    return own, batch["labels"].ne(-100)


def test_psft_ratio_is_one_at_step_zero(with_dropout, tmp_path):
    loss, _ = step_zero(tmp_path, *with_dropout, loss="psft")
    assert float(loss) == pytest.approx(-1.0, abs=1e-6)  # -(1/N) sum_t min(r, clip(r)) with every r = 1


def test_iw_sft_weight_is_one_at_step_zero(with_dropout, tmp_path):
    loss, logged = step_zero(tmp_path, *with_dropout, loss="iw_sft")
    assert float(logged["weight_sum"]) / float(logged["tokens"]) == pytest.approx(1.0, abs=1e-6)
    own, mask = eval_mode_nll(*with_dropout[1:])
    assert float(loss) == pytest.approx(float(-own[mask].mean()), rel=1e-6)  # plain NLL, smoothing 0 (the reference's)


def test_asft_kl_is_zero_at_step_zero(with_dropout, tmp_path):
    loss, _ = step_zero(tmp_path, *with_dropout, loss="asft")
    own, mask = eval_mode_nll(*with_dropout[1:])
    assert float(loss) == pytest.approx(float((own.exp() * -own)[mask].mean()), rel=1e-6)  # DFT's part alone: KL 0


def test_the_model_has_dropout_that_the_other_losses_keep(with_dropout, tmp_path):
    """The check above can fail: the same model with dropout on (DFT keeps it, as TRL's dft_loss trains)
    gives a loss that differs from the no-dropout one."""
    loss, _ = step_zero(tmp_path, *with_dropout, loss="dft")
    own, mask = eval_mode_nll(*with_dropout[1:])
    assert float(loss) != pytest.approx(float((own.exp() * -own)[mask].mean()), rel=1e-3)


def test_forward_hooks_switch_dropout_off_and_restore_each_modules_flag(with_dropout):
    _, model, batch = with_dropout
    model.train()
    model.get_encoder().eval()  # a module deliberately in eval mode stays so
    forward_without_dropout(model)
    inputs = {k: v for k, v in batch.items() if k != "labels"}
    first, second = (model(**inputs).logits for _ in range(2))
    assert torch.equal(first, second)  # no dropout mask
    assert model.training and not model.get_encoder().training and model.get_decoder().training
