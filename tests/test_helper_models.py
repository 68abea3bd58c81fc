"""The helper models are what they claim inside real trainers (training/helper_models.py). Through TRL's
SFTTrainer (the project's subclass, and the deprecated compute_loss_func) and a plain transformers
Trainer: pi_tilde holds the starting weights until it is synced, then the policy's at the sync; the
frozen model never moves, also when it is a copy of a model an SFTTrainer trained (TRL's fused LM head
sets an instance-level forward that a copy keeps). Each helper's logits are compared with those of a
model loaded separately with the weights it should hold. And a short GOLD-s and PSFT run through the
SFTTrainer subclass follows the workflow trainer's losses and weights on the same batches."""

from __future__ import annotations

import copy
import warnings

import pytest
import torch
from conftest import REPO
from settings import objective_settings
from test_causal_models import tiny_causal_setup
from transformers import AutoModelForCausalLM, DataCollatorForSeq2Seq, Seq2SeqTrainingArguments, Trainer, TrainerCallback, TrainingArguments
from yaml import safe_load

from gold_textgen.data.seq2seq_batches import encode_records
from gold_textgen.sft.trainer_losses import ObjectiveLoss
from gold_textgen.training.fine_tune_trainer import FineTuneTrainer
from gold_textgen.training.helper_models import HelperModels, model_from_weights, patched_modules

trl = pytest.importorskip("trl", reason="TRL (pip install -e '.[dev]') runs the SFTTrainer tests")
from gold_textgen.sft.sft_trainer import ObjectiveSFTTrainer  # noqa: E402 (needs TRL)

LENGTH = 10
SYNC_EVERY = 3
# Every objective of the shipped configs with its settings there (as test_trainer_losses.py reads them).
SHIPPED = safe_load((REPO / "config.yaml").read_text())["tasks"]["demo"]["objectives"]
SHIPPED |= safe_load((REPO / "configs" / "objectives.yaml").read_text())["tasks"]["demo"]["objectives"]
# What trains the same way in both trainers: a constant rate, no warmup, no decay, one batch of every example.
SCHEDULE = dict(
    learning_rate=1e-2,
    lr_scheduler_type="constant",
    warmup_steps=0,
    weight_decay=0.0,
    max_grad_norm=1.0,
    gradient_accumulation_steps=1,
    logging_steps=1,
    save_strategy="no",
    report_to="none",
    use_cpu=True,
    seed=0,
    data_seed=0,
    dataloader_num_workers=0,
    bf16=False,
)


@pytest.fixture(scope="module")
def setup():
    return tiny_causal_setup()


def encoded_pairs(records, tokenizer) -> list[dict]:
    return encode_records(records, tokenizer, LENGTH, LENGTH, causal=True)


def sft_rows(records, tokenizer) -> list[dict]:
    """Prompt and completion as one sequence with TRL's completion mask."""
    return [
        {"input_ids": e["input_ids"] + e["labels"], "completion_mask": [0] * len(e["input_ids"]) + [1] * len(e["labels"])}
        for e in encoded_pairs(records, tokenizer)
    ]


def labelled_rows(records, tokenizer) -> list[dict]:
    """The same sequences for a plain Trainer: labels -100 on the prompt."""
    return [
        {"input_ids": e["input_ids"] + e["labels"], "labels": [-100] * len(e["input_ids"]) + e["labels"]}
        for e in encoded_pairs(records, tokenizer)
    ]


def probe_batch(records, tokenizer) -> dict:
    rows = labelled_rows(records[:4], tokenizer)
    width = max(len(r["input_ids"]) for r in rows)
    pad = tokenizer.pad_token_id
    ids = torch.tensor([r["input_ids"] + [pad] * (width - len(r["input_ids"])) for r in rows])
    mask = torch.tensor([[1] * len(r["input_ids"]) + [0] * (width - len(r["input_ids"])) for r in rows])
    return {"input_ids": ids, "attention_mask": mask}


def loaded(config, state: dict) -> torch.nn.Module:
    """A model built here from `config` and loaded with `state`: the logits the weights give."""
    model = AutoModelForCausalLM.from_config(copy.deepcopy(config))
    model.load_state_dict(state)
    return model.eval()


def snapshot(model: torch.nn.Module) -> dict:
    return {name: tensor.detach().clone() for name, tensor in model.state_dict().items()}


class Watch(TrainerCallback):
    """After each update (and pi_tilde's sync): the logits on the probe of pi_tilde, of the frozen model,
    and of the policy's weights in a model built apart from it (`rebuilt(policy)`)."""

    def __init__(self, loss: ObjectiveLoss, probe: dict, rebuilt=lambda model: loaded(model.config, snapshot(model))):
        self.loss, self.probe, self.rebuilt, self.seen = loss, probe, rebuilt, {}

    def on_step_end(self, args, state, control, model=None, **kwargs):
        helpers = self.loss.helpers
        with torch.no_grad():
            self.seen[state.global_step] = {
                "lagged": helpers.lagged(**self.probe).logits,
                "frozen": helpers.frozen(**self.probe).logits,
                "policy": self.rebuilt(model)(**self.probe).logits,
            }


def sft_trained(records, tokenizer, start, output_dir) -> torch.nn.Module:
    """`start`'s language model after one SFTTrainer update: its forward now carries TRL's patch."""
    model = copy.deepcopy(start.language_model)
    config = sft_config(output_dir, 1, 12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        trl.SFTTrainer(model=model, args=config, train_dataset=dataset(sft_rows(records, tokenizer)), processing_class=tokenizer).train()
    return model


def sft_config(output_dir, steps: int, batch_size: int):
    """TRL's arguments for the schedule both paths share; the loss on the completion tokens only."""
    return trl.SFTConfig(
        output_dir=str(output_dir),
        max_steps=steps,
        per_device_train_batch_size=batch_size,
        max_length=None,
        completion_only_loss=True,
        **SCHEDULE,
    )


def dataset(rows):
    from datasets import Dataset

    return Dataset.from_list(rows)


def gold_trainer(kind: str, policy, tokenizer, records, loss: ObjectiveLoss, watch: Watch, output_dir, steps: int):
    if kind == "objective_sft_trainer":
        config = sft_config(output_dir, steps, 4)
        data = dataset(sft_rows(records, tokenizer))
        return ObjectiveSFTTrainer(
            model=policy, args=config, train_dataset=data, processing_class=tokenizer, objective=loss, callbacks=[watch]
        )
    callbacks = [loss.callback(), watch]
    if kind == "sft_compute_loss_func":
        config = sft_config(output_dir, steps, 4)
        data = dataset(sft_rows(records, tokenizer))
        return trl.SFTTrainer(
            model=policy, args=config, train_dataset=data, processing_class=tokenizer, compute_loss_func=loss, callbacks=callbacks
        )
    arguments = TrainingArguments(output_dir=str(output_dir), max_steps=steps, per_device_train_batch_size=4, **SCHEDULE)
    collator = DataCollatorForSeq2Seq(tokenizer)  # pads input ids, and labels with -100
    data = dataset(labelled_rows(records, tokenizer))
    return Trainer(model=policy, args=arguments, train_dataset=data, data_collator=collator, compute_loss_func=loss, callbacks=callbacks)


@pytest.mark.trl
@pytest.mark.filterwarnings("ignore::FutureWarning")  # compute_loss_func in TRL 1.16: the case under test
@pytest.mark.parametrize("kind", ["objective_sft_trainer", "sft_compute_loss_func", "plain_trainer"])
def test_pi_tilde_lags_and_the_frozen_model_stays_in_a_real_trainer(setup, tmp_path, kind):
    records, tokenizer, start, _ = setup
    policy = sft_trained(records, tokenizer, start, tmp_path / "sft")  # continues from SFT, as examples/trl_sft_gold.py
    assert patched_modules(policy)  # TRL's fused LM head: the case a copy gets wrong
    start_weights = snapshot(policy)
    gold_s = {**SHIPPED["gold_s"], "rewards": "online", "sync_every": SYNC_EVERY}
    loss = ObjectiveLoss(**gold_s, reference_model=copy.deepcopy(policy))
    probe = probe_batch(records, tokenizer)
    watch = Watch(loss, probe)
    gold_trainer(kind, policy, tokenizer, records, loss, watch, tmp_path / "gold", steps=SYNC_EVERY + 1).train()
    with torch.no_grad():
        at_start = loaded(policy.config, start_weights)(**probe).logits
    seen = watch.seen

    def same(a, b):
        return torch.allclose(a, b, atol=1e-5, rtol=1e-5)

    for step in range(1, SYNC_EVERY):  # before the first sync: the starting weights, not the policy's
        assert same(seen[step]["lagged"], at_start), step
        assert (seen[step]["lagged"] - seen[step]["policy"]).abs().max() > 1e-3, step
    assert same(seen[SYNC_EVERY]["lagged"], seen[SYNC_EVERY]["policy"])  # synced after update k
    assert same(seen[SYNC_EVERY + 1]["lagged"], seen[SYNC_EVERY]["policy"])  # and held until the next sync
    assert (seen[SYNC_EVERY + 1]["lagged"] - seen[SYNC_EVERY + 1]["policy"]).abs().max() > 1e-3
    for step, logits in seen.items():  # the frozen SFT model never moves
        assert same(logits["frozen"], at_start), step


def test_a_helper_is_a_new_model_with_the_weights_and_nothing_of_the_object(setup):
    start = setup[2]
    model = copy.deepcopy(start)
    model.language_model.forward = model.language_model.forward  # an instance-level forward, as patches set
    model.register_forward_pre_hook(lambda module, args: None)
    clone = model_from_weights(model)
    assert patched_modules(model) == ["language_model"] and patched_modules(clone) == []
    assert not clone._forward_pre_hooks and not clone.training
    assert all(not p.requires_grad for p in clone.parameters())
    for (name, a), (_, b) in zip(model.state_dict().items(), clone.state_dict().items(), strict=True):
        assert torch.equal(a, b) and a.data_ptr() != b.data_ptr(), name
    state = torch.random.get_rng_state()
    model_from_weights(model)
    assert torch.equal(state, torch.random.get_rng_state())  # building it draws nothing from the seeded RNG


def test_a_rebuilt_helper_keeps_each_weights_dtype_its_ties_and_its_logits(setup):
    """A bf16 language model whose rotary frequencies stay fp32 (as from_pretrained leaves them), and the
    recurrent copy model (whose GRUs keep a list of their weights): the rebuilt helper has every tensor in
    its source's dtype, its tied embeddings still tied, and the source's logits to the bit."""
    from settings import tiny_recurrent
    from test_recurrent_models import copy_task

    from gold_textgen.data.seq2seq_batches import PaddedFieldsCollator, tokenize_records
    from gold_textgen.data.tokenization import train_tokenizer
    from gold_textgen.models.transformer import initial_model

    records, tokenizer, start, _ = setup
    language_model = copy.deepcopy(start.language_model).to(torch.bfloat16)
    rotary = next(name for name, _ in language_model.named_buffers() if name.endswith("inv_freq"))
    language_model.get_buffer(rotary).data = language_model.get_buffer(rotary).float()
    clone = model_from_weights(language_model)
    tensors = [*language_model.named_parameters(), *language_model.named_buffers()]
    for (name, a), (_, b) in zip(tensors, [*clone.named_parameters(), *clone.named_buffers()], strict=True):
        assert a.dtype == b.dtype and torch.equal(a, b), name
    assert clone.get_output_embeddings().weight is clone.get_input_embeddings().weight
    probe = probe_batch(records, tokenizer)
    with torch.no_grad():
        assert torch.equal(language_model.eval()(**probe).logits, clone(**probe).logits)

    torch.manual_seed(0)
    words = train_tokenizer([" ".join(f"w{i}" for i in range(20))], copy_slots=6)
    recurrent = initial_model(tiny_recurrent("pointer_generator", coverage=True), words).eval()
    batch = PaddedFieldsCollator(DataCollatorForSeq2Seq(words, model=recurrent))(
        list(tokenize_records(copy_task(4, seed=2), words, 12, 12))
    )
    with torch.no_grad():
        assert torch.equal(recurrent(**batch).logits, model_from_weights(recurrent)(**batch).logits)


def test_a_reference_model_that_is_the_policy_is_refused(setup):
    _, _, start, _ = setup
    policy = copy.deepcopy(start.language_model)
    settings = objective_settings(reward="s", min_weight=0.1, floor=0.05, rewards="online")
    with pytest.raises(ValueError, match="shares its weights with the policy"):
        HelperModels.build(settings, policy, frozen=policy)


@pytest.mark.trl
@pytest.mark.parametrize("name", ["gold_s", "psft"])
def test_the_sft_trainer_follows_the_workflow_trainers_losses_and_weights(setup, tmp_path, name):
    """Four updates of one batch of all 12 examples, pi_tilde synced every 2, in the workflow's
    FineTuneTrainer (the causal model in the prompt -> completion contract) and in ObjectiveSFTTrainer (the
    causal LM in TRL's layout). Tolerance: 1e-4 relative on the losses and weights (the two paths pad and
    sum in other orders)."""
    records, tokenizer, start, _ = setup
    settings = {**SHIPPED[name], "rewards": "online", "sync_every": 2}
    steps, batch_size = 4, len(records)

    workflow_policy = copy.deepcopy(start)
    arguments = Seq2SeqTrainingArguments(
        output_dir=str(tmp_path / "workflow"),
        max_steps=steps,
        per_device_train_batch_size=batch_size,
        remove_unused_columns=False,
        **SCHEDULE,
    )
    workflow = FineTuneTrainer(
        model=workflow_policy,
        args=arguments,
        train_dataset=dataset(encoded_pairs(records, tokenizer)),
        data_collator=DataCollatorForSeq2Seq(tokenizer, model=workflow_policy),
        processing_class=tokenizer,
        helpers=HelperModels.build(objective_settings(**settings), workflow_policy),
    )
    workflow.train()

    policy = copy.deepcopy(start.language_model)
    loss = ObjectiveLoss(**settings, reference_model=model_from_weights(start.language_model))
    config = sft_config(tmp_path / "sft", steps, batch_size)
    library = ObjectiveSFTTrainer(
        model=policy, args=config, train_dataset=dataset(sft_rows(records, tokenizer)), processing_class=tokenizer, objective=loss
    )
    library.train()

    def losses(trainer):
        return torch.tensor([entry["loss"] for entry in trainer.state.log_history if "loss" in entry])

    assert len(losses(library)) == steps
    assert torch.allclose(losses(library), losses(workflow), rtol=1e-4, atol=1e-6), (losses(library), losses(workflow))
    assert (losses(library)[0] - losses(library)[-1]).abs() > 1e-3  # it trained
    for name_, tensor in policy.state_dict().items():
        assert torch.allclose(tensor, workflow_policy.language_model.state_dict()[name_], rtol=1e-4, atol=1e-5), name_
