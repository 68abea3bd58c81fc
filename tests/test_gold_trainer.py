"""FineTuneTrainer wiring on a tiny model: cached and online rewards agree, pi_tilde syncs every k updates,
and the loss is normalised by the tokens of the whole accumulated update."""

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from settings import TINY_MODEL, demo_spec, objective_settings
from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainingArguments

from gold_textgen.checkpoints.checkpoint_state import LaggedPolicySync
from gold_textgen.config.schema import load_schema
from gold_textgen.data.demo_task import generate_split
from gold_textgen.data.seq2seq_batches import PaddedFieldsCollator, tokenize_records
from gold_textgen.data.tokenization import train_tokenizer, training_texts
from gold_textgen.evaluation.token_nll import token_nll_table
from gold_textgen.models.transformer import build_scratch_model
from gold_textgen.objectives.gold import REWARD_KINDS
from gold_textgen.objectives.weighted_nll import reference_logprobs
from gold_textgen.runtime.errors import ConfigError
from gold_textgen.training.fine_tune_trainer import REWARD_FIELD, FineTuneTrainer
from gold_textgen.training.helper_models import HelperModels, model_from_weights
from gold_textgen.training.objective_settings import ObjectiveSettings
from gold_textgen.training.reward_cache import attach_cached_rewards


@pytest.fixture(scope="module")
def setup():
    torch.manual_seed(0)
    records = generate_split(demo_spec(num_train=24, max_length=8), "train")
    tokenizer = train_tokenizer(training_texts(records))
    model = build_scratch_model(TINY_MODEL, tokenizer)
    return records, tokenizer, model


def make_trainer(
    tmp_path: Path, model, tokenizer, objective: ObjectiveSettings, frozen_model=None, truncation=None, **args
) -> FineTuneTrainer:
    arguments = Seq2SeqTrainingArguments(output_dir=str(tmp_path), report_to="none", use_cpu=True, remove_unused_columns=False, **args)
    collator = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer, model=model), label_fields=(REWARD_FIELD,))
    return FineTuneTrainer(
        model=model,
        args=arguments,
        data_collator=collator,
        processing_class=tokenizer,
        helpers=HelperModels(objective, lagged=model_from_weights(model), frozen=frozen_model, truncation=truncation),
    )


def test_cached_and_online_rewards_give_the_same_loss(setup, tmp_path):
    records, tokenizer, model = setup
    dataset = tokenize_records(records, tokenizer, 12, 12)
    cache = token_nll_table(model, tokenizer, records, 12, 12, batch_size=5)
    cached_set = attach_cached_rewards(dataset, cache)
    collate = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer, model=model), label_fields=(REWARD_FIELD,))
    for reward in ("p", "s"):
        settings = dict(reward=reward, min_weight=0.1, floor=0.05 if reward == "s" else 1.0, baseline=-60.0 if reward == "p" else 0.0)
        cached = make_trainer(tmp_path, model, tokenizer, objective_settings(**settings, rewards="cached"))
        online = make_trainer(
            tmp_path, model, tokenizer, objective_settings(**settings, rewards="online"), frozen_model=model_from_weights(model)
        )
        model.train()
        with torch.no_grad():
            batch = collate([cached_set[i] for i in range(8)])
            loss_cached = cached.compute_loss(model, dict(batch))
            batch.pop(REWARD_FIELD)
            loss_online = online.compute_loss(model, dict(batch))
        assert torch.allclose(loss_cached, loss_online, atol=1e-5), reward


def test_reward_cache_must_match_the_tokenized_references(setup):
    records, tokenizer, model = setup
    cache = token_nll_table(model, tokenizer, records, 12, 12, batch_size=5)
    with pytest.raises(ValueError, match="covers 24 examples but the training set has 23"):
        attach_cached_rewards(tokenize_records(records[:23], tokenizer, 12, 12), cache)
    shifted = tokenize_records(records[1:] + records[:1], tokenizer, 12, 12)
    with pytest.raises(ValueError, match="other tokens than the training reference"):
        attach_cached_rewards(shifted, cache)


def test_lagged_policy_changes_exactly_at_multiples_of_k(setup):
    _, tokenizer, _ = setup
    policy = build_scratch_model(TINY_MODEL, tokenizer)
    lagged = model_from_weights(policy)
    sync = LaggedPolicySync(lagged, every=3)
    snapshots = []
    for step in range(1, 8):
        with torch.no_grad():
            for parameter in policy.parameters():
                parameter.add_(0.01)  # an optimizer update
        sync.on_step_end(None, SimpleNamespace(global_step=step, epoch=step / 4), None, model=policy)
        snapshots.append(next(lagged.parameters()).detach().clone())
    changed = [step for step in range(2, 8) if not torch.equal(snapshots[step - 1], snapshots[step - 2])]
    assert changed == [3, 6]
    assert sync.sync_steps == [3, 6]
    assert torch.allclose(snapshots[-1], next(iter(policy.parameters())).detach() - 0.01)  # as it was after update 6


def test_with_each_epoch_pi_tilde_is_also_copied_when_an_epoch_ends_and_after_a_resume(setup):
    """The authors' fairseq_cli/train.py (line 154) re-copies pi_tilde at every epoch start: 4 updates an epoch, k = 3."""
    _, tokenizer, _ = setup
    policy = build_scratch_model(TINY_MODEL, tokenizer)
    straight = LaggedPolicySync(model_from_weights(policy), every=3, each_epoch=True)
    straight.on_train_begin(None, SimpleNamespace(epoch=0.0), None)
    for step in range(1, 10):
        straight.on_step_end(None, SimpleNamespace(global_step=step, epoch=step / 4), None, model=policy)
    assert straight.sync_steps == [3, 4, 6, 8, 9]
    resumed = LaggedPolicySync(model_from_weights(policy), every=3, each_epoch=True)
    resumed.on_train_begin(None, SimpleNamespace(epoch=5 / 4), None)  # from the checkpoint of update 5
    for step in range(6, 10):
        resumed.on_step_end(None, SimpleNamespace(global_step=step, epoch=step / 4), None, model=policy)
    assert resumed.sync_steps == [6, 8, 9]


def test_loss_is_normalised_by_the_tokens_of_the_whole_update(setup, tmp_path):
    records, tokenizer, model = setup
    dataset = tokenize_records(records, tokenizer, 12, 12)
    collate = DataCollatorForSeq2Seq(tokenizer, model=model)
    trainer = make_trainer(tmp_path, model, tokenizer, objective_settings(reward="delta"))
    model.train()
    batch = collate([dataset[i] for i in range(6)])
    tokens = int(batch["labels"].ne(-100).sum())
    with torch.no_grad():
        own = trainer.compute_loss(model, dict(batch))
        shared = trainer.compute_loss(model, dict(batch), num_items_in_batch=torch.tensor(3 * tokens))
    assert torch.allclose(shared * 3, own)


def test_delta_objective_weights_tokens_by_lagged_probability(setup, tmp_path):
    records, tokenizer, model = setup
    dataset = tokenize_records(records, tokenizer, 12, 12)
    batch = DataCollatorForSeq2Seq(tokenizer, model=model)([dataset[i] for i in range(4)])
    trainer = make_trainer(tmp_path, model, tokenizer, objective_settings(reward="delta", min_weight=0.0, label_smoothing=0.0))
    model.eval()  # no dropout anyway; compare against a hand computation
    inputs = {k: v for k, v in batch.items() if k != "labels"}
    with torch.no_grad():
        logprobs = reference_logprobs(torch.log_softmax(model(**inputs).logits, dim=-1), batch["labels"])
        mask = batch["labels"].ne(-100)
        expected = -(logprobs.exp() * logprobs)[mask].sum() / mask.sum()
        model.train()
        loss = trainer.compute_loss(model, dict(batch))
    assert torch.allclose(loss, expected, atol=1e-6)


def test_settings_are_range_checked_by_the_schema():
    with pytest.raises(ConfigError, match="min_weight"):
        objective_settings(reward="s", min_weight=2.0)
    with pytest.raises(ConfigError, match="reward"):
        objective_settings(reward="bleu")


def test_the_schema_offers_exactly_the_reward_kinds_the_objective_computes():
    assert load_schema()["$defs"]["objective"]["properties"]["reward"]["enum"] == list(REWARD_KINDS)


def test_gold_delta_without_lag_and_floor_trains_exactly_as_dft(setup, tmp_path):
    """In the trainer too: GOLD-delta with u = 0 weighting by the current policy (no lag) gives DFT's loss
    on the same batch; with the lag (pi_tilde = a frozen copy) the loss is the same at the start, since
    pi_tilde starts as the policy."""
    records, tokenizer, model = setup
    dataset = tokenize_records(records, tokenizer, 12, 12)
    batch = DataCollatorForSeq2Seq(tokenizer, model=model)([dataset[i] for i in range(6)])
    no_lag = objective_settings(reward="delta", min_weight=0.0, lag=False, label_smoothing=0.0)
    dft = objective_settings(loss="dft", label_smoothing=0.0)
    lagged = objective_settings(reward="delta", min_weight=0.0, label_smoothing=0.0)
    model.train()
    losses = []
    for settings in (no_lag, dft, lagged):
        torch.manual_seed(1)  # the same dropout mask in each pass
        with torch.no_grad():
            losses.append(make_trainer(tmp_path, model, tokenizer, settings).compute_loss(model, dict(batch)))
    assert torch.equal(losses[0], losses[1])
    assert torch.allclose(losses[2], losses[1], atol=1e-6)


@pytest.mark.parametrize("bf16", [False, True])
def test_the_helper_models_run_in_the_policys_mixed_precision(setup, tmp_path, bf16):
    """With bf16 the lagged policy and the online reward model run under the same autocast as the policy
    (accelerate casts only the prepared policy's forward), and in fp32 under none."""
    records, tokenizer, model = setup
    dataset = tokenize_records(records, tokenizer, 12, 12)
    batch = DataCollatorForSeq2Seq(tokenizer, model=model)([dataset[i] for i in range(4)])
    settings = objective_settings(reward="s", min_weight=0.1, floor=0.05, rewards="online")
    trainer = make_trainer(tmp_path, model, tokenizer, settings, frozen_model=model_from_weights(model), bf16=bf16)
    seen = []
    for helper in (trainer.helpers.lagged, trainer.helpers.frozen):
        forward = helper.forward

        def recording_forward(*args, _forward=forward, **kwargs):
            seen.append(torch.is_autocast_enabled("cpu") and torch.get_autocast_dtype("cpu") == torch.bfloat16)
            return _forward(*args, **kwargs)

        helper.forward = recording_forward
    model.train()
    with torch.no_grad():
        loss = trainer.compute_loss(model, dict(batch))
    assert seen == [bf16, bf16]
    assert torch.isfinite(loss)
