"""The objectives as a loss for a plain transformers Trainer and TRL's SFTTrainer (sft/trainer_losses.py):
on the same batch, each equals the workflow trainer's loss (the causal model in the workflow's prompt ->
completion contract there, a plain causal LM with TRL's label layout here), and a few SFTTrainer steps run,
checkpoint and resume to the uninterrupted run's weights."""

from __future__ import annotations

import copy
import json

import pytest
import torch
import yaml
from conftest import REPO
from settings import objective_settings
from test_causal_models import tiny_causal_setup
from test_gold_trainer import make_trainer
from test_training import CrashAfterCheckpoint
from transformers import DataCollatorForSeq2Seq

from gold_textgen.data.seq2seq_batches import encode_records
from gold_textgen.objectives.loss_truncation import LossTruncation
from gold_textgen.sft.trainer_losses import ObjectiveLoss
from gold_textgen.training import objective_loss
from gold_textgen.training.helper_models import model_from_weights

LENGTH = 10
# Every objective of the shipped configs with its settings there, and plain NLL.
SHIPPED = yaml.safe_load((REPO / "config.yaml").read_text())["tasks"]["demo"]["objectives"]
SHIPPED |= yaml.safe_load((REPO / "configs" / "objectives.yaml").read_text())["tasks"]["demo"]["objectives"]
OBJECTIVES = {"nll": {"loss": "nll"}, **SHIPPED}


@pytest.fixture(scope="module")
def setup():
    return tiny_causal_setup()


def causal_batch(encoded: list[dict], pad_token_id: int) -> dict:
    """Prompt and completion as one sequence, labels -100 on the prompt and the padding (TRL's layout)."""
    width = max(len(e["input_ids"]) + len(e["labels"]) for e in encoded)
    ids, mask, labels = [], [], []
    for example in encoded:
        sequence = example["input_ids"] + example["labels"]
        padding = width - len(sequence)
        ids.append(sequence + [pad_token_id] * padding)
        mask.append([1] * len(sequence) + [0] * padding)
        labels.append([-100] * len(example["input_ids"]) + example["labels"] + [-100] * padding)
    return {"input_ids": torch.tensor(ids), "attention_mask": torch.tensor(mask), "labels": torch.tensor(labels)}


def shared_steps(monkeypatch) -> list[str]:
    """The losses of each objective computed through the one loss step (objective_loss.loss_step, which
    looks the terms up in its module): a trainer path that computed its loss another way leaves no entry."""
    calls, original = [], objective_loss.objective_terms

    def counted(batch, labels, settings, state):
        calls.append(settings.loss)
        return original(batch, labels, settings, state)

    monkeypatch.setattr(objective_loss, "objective_terms", counted)
    return calls


def both_losses(setup, tmp_path, name: str):
    """The workflow trainer's loss for objective `name` on a batch of the demo, with the policy moved away
    from pi_tilde and the reference (as after some updates); and the library loss for it with the causal
    LM inside that policy and the same batch in TRL's layout: (expected, loss, language model, batch)."""
    records, tokenizer, start, _ = setup
    settings = {**OBJECTIVES[name], "rewards": "online"}
    policy = copy.deepcopy(start)
    reference = model_from_weights(start)  # the model fine-tuning starts from: rewards, ASFT's anchor
    objective = objective_settings(**settings)
    truncation = None
    if objective.loss == "loss_truncation":
        truncation = LossTruncation(objective.drop_fraction, objective.warmup, objective.window)
    workflow = make_trainer(tmp_path, policy, tokenizer, objective, frozen_model=reference, truncation=truncation)
    with torch.no_grad():
        for parameter in policy.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    encoded = encode_records(records, tokenizer, LENGTH, LENGTH, causal=True)
    seq2seq = DataCollatorForSeq2Seq(tokenizer, model=policy)(copy.deepcopy(encoded))
    expected = workflow.compute_loss(policy.train(), seq2seq)
    loss = ObjectiveLoss(**settings, reference_model=reference.language_model)
    loss.start(start.language_model)  # pi_tilde from the starting weights, as the callback builds it when training starts
    loss.attach(policy.language_model)
    return expected, loss, policy.language_model, causal_batch(encoded, tokenizer.pad_token_id)


@pytest.mark.parametrize("name", sorted(OBJECTIVES))
def test_the_library_loss_equals_the_workflow_trainers_on_the_same_batch(setup, tmp_path, name, monkeypatch):
    steps = shared_steps(monkeypatch)
    expected, loss, language_model, batch = both_losses(setup, tmp_path, name)
    labels = batch.pop("labels")
    value = loss(language_model(**batch), labels)
    assert torch.allclose(value, expected, rtol=1e-5, atol=1e-6), (name, float(value), float(expected))
    assert len(steps) == 2  # the workflow's trainer and the compute_loss_func path


@pytest.mark.trl
@pytest.mark.parametrize("name", sorted(OBJECTIVES))
def test_the_loss_trls_sft_trainer_computes_equals_the_workflow_trainers(setup, tmp_path, name, monkeypatch):
    """The same, through the SFTTrainer subclass's compute_loss (one forward pass, the helpers reading the
    same inputs)."""
    steps = shared_steps(monkeypatch)
    expected, loss, language_model, batch = both_losses(setup, tmp_path, name)
    records, tokenizer, _, _ = setup
    trainer = sft_trainer(language_model, tokenizer, records, tmp_path / "sft", 1, loss)
    value = trainer.compute_loss(language_model, batch)
    assert torch.allclose(value, expected, rtol=1e-5, atol=1e-6), (name, float(value), float(expected))
    assert len(steps) == 2  # the workflow's trainer and ObjectiveSFTTrainer


def test_settings_are_checked_and_a_missing_helper_is_named():
    with pytest.raises(ValueError, match="rewrad"):
        ObjectiveLoss("gold", rewrad="s")
    with pytest.raises(ValueError, match="pass reference_model"):  # when training starts, on a policy without adapters
        ObjectiveLoss("gold", reward="s").start(tiny_causal_setup()[2].language_model)
    with pytest.raises(Exception, match="min_weight"):
        ObjectiveLoss("gold", reward="delta", min_weight=-1.0)


def sft_trainer(model, tokenizer, records, output_dir, max_steps: int, loss: ObjectiveLoss, callbacks=(), **settings):
    from datasets import Dataset

    trl = pytest.importorskip("trl", reason="TRL (pip install -e '.[dev]') runs the SFTTrainer tests")

    encoded = encode_records(records, tokenizer, LENGTH, LENGTH, causal=True)
    rows = [
        {"input_ids": e["input_ids"] + e["labels"], "completion_mask": [0] * len(e["input_ids"]) + [1] * len(e["labels"])} for e in encoded
    ]
    config = trl.SFTConfig(
        output_dir=str(output_dir),
        max_steps=max_steps,
        **{"per_device_train_batch_size": 4, **settings},
        learning_rate=1e-3,
        save_steps=3,
        logging_steps=1,
        report_to="none",
        use_cpu=True,
        seed=0,
        data_seed=0,
        dataloader_num_workers=0,
        max_length=None,
        completion_only_loss=True,
        bf16=False,  # TRL's default is bf16 autocast, on a CPU too
    )
    from gold_textgen.sft.sft_trainer import ObjectiveSFTTrainer

    return ObjectiveSFTTrainer(
        model=model,
        args=config,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        objective=loss,
        callbacks=list(callbacks),
    )


@pytest.mark.trl
def test_gold_s_trains_in_trls_sft_trainer_and_resumes_to_the_uninterrupted_weights(setup, tmp_path):
    records, tokenizer, start, _ = setup
    gold_s = {**SHIPPED["gold_s"], "sync_every": 2}

    def run(folder, resume=False, callbacks=()):
        loss = ObjectiveLoss(**gold_s, reference_model=copy.deepcopy(start.language_model))
        trainer = sft_trainer(copy.deepcopy(start.language_model), tokenizer, records, folder, 6, loss, callbacks)
        trainer.train(resume_from_checkpoint=str(folder / "checkpoint-3") if resume else None)
        return trainer

    straight = run(tmp_path / "straight")
    logged = [entry for entry in straight.state.log_history if "loss" in entry]
    assert len(logged) == 6 and all(torch.isfinite(torch.tensor(entry["loss"])) for entry in logged)
    assert (tmp_path / "straight" / "checkpoint-3" / "lagged_policy.safetensors").is_file()
    with pytest.raises(RuntimeError, match="killed after checkpoint-3"):
        run(tmp_path / "interrupted", callbacks=(CrashAfterCheckpoint(3),))
    resumed = run(tmp_path / "interrupted", resume=True)
    for a, b in zip(straight.model.state_dict().values(), resumed.model.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    history = json.loads((tmp_path / "straight" / "checkpoint-6" / "trainer_state.json").read_text())["log_history"]
    assert "mean_token_accuracy" in history[0] and "entropy" in history[0]  # TRL's own statistics, beside the loss


@pytest.mark.trl
def test_a_model_that_takes_no_loss_kwargs_gets_the_token_mean_over_the_update(setup, tmp_path):
    """Two micro-batches of different token counts per update: a model class that says it takes no loss
    kwargs trains to the same weights as one that does (the token mean over the update, not a mean of the
    micro-batches' means)."""
    records, tokenizer, start, _ = setup
    trained = {}
    for accepts in (True, False):
        model = copy.deepcopy(start.language_model)
        model.accepts_loss_kwargs = accepts  # what transformers' Trainer reads from the model class
        loss = ObjectiveLoss("nll", label_smoothing=0.0)
        trainer = sft_trainer(
            model, tokenizer, records, tmp_path / str(accepts), 1, loss, per_device_train_batch_size=3, gradient_accumulation_steps=2
        )
        trainer.train()
        trained[accepts] = torch.cat([parameter.detach().flatten() for parameter in model.parameters()])
    assert torch.allclose(trained[True], trained[False], atol=1e-7)


def test_the_librarys_entry_points_import_from_the_sft_package_without_loading_trl_first():
    """`from gold_textgen.sft import ObjectiveLoss, ObjectiveSFTTrainer` is the library's stable import, and
    importing the package alone loads neither TRL nor torch (the `gold-textgen sft` command checks a config
    before it pays for them)."""
    import subprocess
    import sys

    probe = "import sys, gold_textgen.sft; print(sorted(m for m in ('trl', 'torch') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip() == "[]"
    from gold_textgen import sft
    from gold_textgen.sft.sft_trainer import ObjectiveSFTTrainer as defined_trainer
    from gold_textgen.sft.trainer_losses import ObjectiveLoss as defined_loss

    assert (sft.ObjectiveLoss, sft.ObjectiveSFTTrainer) == (defined_loss, defined_trainer)
    assert sft.__all__ == ["ObjectiveLoss", "ObjectiveSFTTrainer"]
