"""LoRA adapters for decoder-only models (models/lora.py, `model.lora`): the policy trains an adapter over
a frozen base, and GOLD's pi_tilde and the frozen SFT model are two more adapters of the same base module
(training/helper_models.py, AdapterHelper): one copy of the base weights in memory where full weights
need three. Through transformers' Trainer and TRL's SFTTrainer, pi_tilde holds the starting adapter until
it is synced, then the policy's at the sync, and the frozen adapter never moves; their logits are compared
with those of a model built here with the weights each should hold."""

from __future__ import annotations

import copy

import pytest
import torch
from test_causal_models import TINY_CAUSAL, tiny_causal_setup
from test_helper_models import SYNC_EVERY, Watch, dataset, labelled_rows, probe_batch, sft_config, sft_rows
from transformers import AutoModelForCausalLM, DataCollatorForSeq2Seq, Trainer, TrainingArguments

from gold_textgen.models.lora import with_lora
from gold_textgen.models.prompt_completion import build_causal_model
from gold_textgen.models.transformer import load_pretrained_model
from gold_textgen.sft.trainer_losses import ObjectiveLoss
from gold_textgen.training.helper_models import AdapterHelper, HelperModels

LORA = {"r": 4, "alpha": 8, "dropout": 0.0, "target_modules": "all-linear"}
HELPER_ADAPTERS = ("lagged_policy", "frozen_start")


@pytest.fixture(scope="module")
def setup():
    return tiny_causal_setup()


def gold_s(**overrides):
    from settings import objective_settings

    return objective_settings(reward="s", floor=0.05, min_weight=0.1, rewards="online", **overrides)


def test_a_lora_model_trains_its_adapter_only_and_saves_and_loads_as_it_was(setup, tmp_path):
    tokenizer = setup[1]
    torch.manual_seed(0)
    model = build_causal_model({**TINY_CAUSAL, "lora": LORA}, tokenizer)
    trainable = [name for name, p in model.named_parameters() if p.requires_grad]
    assert trainable and all(".lora_" in name for name in trainable)
    with torch.no_grad():  # an adapter that changes the logits (peft starts lora_B at zero)
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(0, 0.1)
    model.save_pretrained(tmp_path)
    loaded = load_pretrained_model(tmp_path)
    batch = DataCollatorForSeq2Seq(tokenizer, model=model)(setup[3][:4])
    with torch.no_grad():
        assert torch.equal(model.eval()(**batch).logits, loaded.eval()(**batch).logits)
    assert loaded.config.lora == LORA


def base_copies(policy: torch.nn.Module, helpers: HelperModels) -> int:
    """How many copies of the base weights (every weight that is not an adapter's) the policy and its
    helpers hold in memory: distinct storages per base tensor, the most of any."""
    modules = [policy] + [h for h in (helpers.lagged, helpers.frozen) if h is not None]
    storages: dict[str, set[int]] = {}
    for module in modules:
        named = module.state_dict() if isinstance(module, AdapterHelper) else dict(module.named_parameters())
        for name, tensor in named.items():
            if "lora_" not in name:
                key = name.replace("language_model.base_model.model.", "language_model.").replace(".base_layer.", ".")
                storages.setdefault(key, set()).add(tensor.untyped_storage().data_ptr())
    return max(len(found) for found in storages.values())


def test_gold_s_keeps_one_copy_of_the_base_weights_with_adapters_and_three_without(setup):
    _, tokenizer, _, _ = setup
    lora_policy = build_causal_model({**TINY_CAUSAL, "lora": LORA}, tokenizer)
    with_adapters = HelperModels.build(gold_s(), lora_policy)
    assert isinstance(with_adapters.lagged, AdapterHelper) and isinstance(with_adapters.frozen, AdapterHelper)
    assert base_copies(lora_policy, with_adapters) == 1
    full_policy = build_causal_model(TINY_CAUSAL, tokenizer)
    assert base_copies(full_policy, HelperModels.build(gold_s(), full_policy)) == 3
    saved = lora_policy._keys_to_ignore_on_save
    assert saved and all(any(f".{name}." in key for name in HELPER_ADAPTERS) for key in saved)  # never in a saved model


def peft_causal_lm(start) -> torch.nn.Module:
    """`start`'s language model with a LoRA adapter whose update is not zero (as after SFT)."""
    torch.manual_seed(1)
    model = with_lora(copy.deepcopy(start.language_model), LORA)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(0, 0.1)
    return model


def policy_weights(model) -> dict:
    """The policy's own weights (base and its adapter), without the helpers' adapters."""
    return {k: v.detach().clone() for k, v in model.state_dict().items() if not any(f".{name}." in k for name in HELPER_ADAPTERS)}


def loaded(model, state: dict) -> torch.nn.Module:
    """A peft model built here from `model`'s base config with `state` (base and adapter weights)."""
    base = AutoModelForCausalLM.from_config(copy.deepcopy(model.get_base_model().config))
    fresh = with_lora(base, LORA)
    fresh.load_state_dict(state)
    return fresh.eval()


@pytest.mark.trl
@pytest.mark.parametrize("kind", ["objective_sft_trainer", "plain_trainer"])
def test_lora_pi_tilde_lags_and_the_starting_adapter_stays_in_a_real_trainer(setup, tmp_path, kind):
    records, tokenizer, start, _ = setup
    policy = peft_causal_lm(start)
    start_weights = policy_weights(policy)
    loss = ObjectiveLoss("gold", reward="s", floor=0.05, min_weight=0.1, sync_every=SYNC_EVERY)  # frozen: the starting adapter
    probe = probe_batch(records, tokenizer)
    watch = Watch(loss, probe, rebuilt=lambda model: loaded(model, policy_weights(model)))
    steps = SYNC_EVERY + 1
    if kind == "objective_sft_trainer":
        from gold_textgen.sft.sft_trainer import ObjectiveSFTTrainer

        trainer = ObjectiveSFTTrainer(
            model=policy,
            args=sft_config(tmp_path, steps, 4),
            train_dataset=dataset(sft_rows(records, tokenizer)),
            processing_class=tokenizer,
            objective=loss,
            callbacks=[watch],
        )
    else:
        arguments = TrainingArguments(
            output_dir=str(tmp_path), max_steps=steps, per_device_train_batch_size=4, learning_rate=1e-2, report_to="none", use_cpu=True
        )
        trainer = Trainer(
            model=policy,
            args=arguments,
            train_dataset=dataset(labelled_rows(records, tokenizer)),
            data_collator=DataCollatorForSeq2Seq(tokenizer),
            compute_loss_func=loss,
            callbacks=[loss.callback(), watch],
        )
    trainer.train()
    assert isinstance(loss.helpers.lagged, AdapterHelper) and isinstance(loss.helpers.frozen, AdapterHelper)
    with torch.no_grad():
        at_start = loaded(policy, start_weights)(**probe).logits
    seen = watch.seen

    def same(a, b):
        return torch.allclose(a, b, atol=1e-5, rtol=1e-5)

    for step in range(1, SYNC_EVERY):
        assert same(seen[step]["lagged"], at_start), step
        assert (seen[step]["lagged"] - seen[step]["policy"]).abs().max() > 1e-3, step
    assert same(seen[SYNC_EVERY]["lagged"], seen[SYNC_EVERY]["policy"])
    assert same(seen[SYNC_EVERY + 1]["lagged"], seen[SYNC_EVERY]["policy"])
    assert (seen[SYNC_EVERY + 1]["lagged"] - seen[SYNC_EVERY + 1]["policy"]).abs().max() > 1e-3
    for step, logits in seen.items():
        assert same(logits["frozen"], at_start), step
    base = {k: v for k, v in start_weights.items() if "lora_" not in k}
    assert all(torch.equal(v, policy.state_dict()[k]) for k, v in base.items())  # the base never trains


@pytest.mark.trl
@pytest.mark.slow
def test_a_lora_gold_s_run_in_the_sft_trainer_resumes_to_the_uninterrupted_adapter(setup, tmp_path):
    """pi_tilde's adapter and the starting (frozen) adapter are kept in every checkpoint: a run killed after
    update 3 and resumed ends with the adapter of the run that was not."""
    from test_trainer_losses import sft_trainer
    from test_training import CrashAfterCheckpoint

    records, tokenizer, start, _ = setup

    def run(folder, resume=False, callbacks=()):
        loss = ObjectiveLoss("gold", reward="s", floor=0.05, min_weight=0.1, sync_every=2)
        trainer = sft_trainer(peft_causal_lm(start), tokenizer, records, folder, 6, loss, callbacks)
        trainer.train(resume_from_checkpoint=str(folder / "checkpoint-3") if resume else None)
        return trainer

    straight = run(tmp_path / "straight")
    assert {"lagged_policy.safetensors", "frozen_adapter.safetensors"} <= {
        p.name for p in (tmp_path / "straight" / "checkpoint-3").iterdir()
    }
    with pytest.raises(RuntimeError, match="killed after checkpoint-3"):
        run(tmp_path / "interrupted", callbacks=(CrashAfterCheckpoint(3),))
    resumed = run(tmp_path / "interrupted", resume=True)
    for (name, a), (_, b) in zip(policy_weights(straight.model).items(), policy_weights(resumed.model).items(), strict=True):
        assert torch.equal(a, b), name
    assert list(straight.model.peft_config) == ["default"]  # the helpers' adapters are gone once training has ended
