"""Training entry points on tiny models: the pretrained-checkpoint path and resumable checkpoints."""

import json
from pathlib import Path

import pytest
from conftest import REPO, TINY_MODEL, tiny_task
from transformers import TrainerCallback

from gold_textgen.checkpoints import resume_point
from gold_textgen.gold_training import train_gold
from gold_textgen.models import build_scratch_model, count_parameters, load_pretrained_model
from gold_textgen.sampling import TokenBudgetBatchSampler
from gold_textgen.seq2seq_data import length_sorted_batches
from gold_textgen.token_nll import write_token_nll
from gold_textgen.training import TrainingJob, train_mle


def test_mle_from_a_pretrained_checkpoint_directory(tiny_data, tmp_path):
    data_dir, tokenizer = tiny_data
    pretrained = tmp_path / "pretrained"
    build_scratch_model(TINY_MODEL, tokenizer).save_pretrained(pretrained)
    tokenizer.save_pretrained(pretrained)
    task = tiny_task({"kind": "pretrained", "name_or_path": str(pretrained)})
    job = TrainingJob(task, "mle", 3, data_dir / "train.jsonl", data_dir / "valid.jsonl", None, tmp_path / "out", tmp_path / "ckpt", REPO)
    summary = train_mle(job)
    assert summary["global_step"] == 4 and summary["best_checkpoint"] in {"checkpoint-2", "checkpoint-4"}
    reloaded = load_pretrained_model(tmp_path / "out")
    assert count_parameters(reloaded) == summary["num_parameters"]
    assert json.loads((tmp_path / "out" / "provenance.json").read_text())["seed"] == 3


def test_rerun_resumes_from_the_last_checkpoint(tiny_data, tmp_path):
    data_dir, tokenizer = tiny_data
    (tmp_path / "tok").mkdir()
    tokenizer.save_pretrained(tmp_path / "tok")
    task = tiny_task(TINY_MODEL)
    job = TrainingJob(
        task, "mle", 1, data_dir / "train.jsonl", data_dir / "valid.jsonl", tmp_path / "tok", tmp_path / "a", tmp_path / "ckpt", REPO
    )
    first = train_mle(job)
    assert first["resumed_from"] is None
    again = train_mle(TrainingJob(**{**job.__dict__, "output_dir": tmp_path / "b"}))
    assert again["resumed_from"] == "checkpoint-4"  # nothing left to do: the same model comes back
    assert (tmp_path / "a" / "model.safetensors").read_bytes() == (tmp_path / "b" / "model.safetensors").read_bytes()


class CrashAfterCheckpoint(TrainerCallback):
    """Stands in for a job killed right after a checkpoint was written."""

    def __init__(self, step: int):
        self.step = step

    def on_save(self, args, state, control, **kwargs):
        if state.global_step == self.step:
            raise RuntimeError(f"killed after checkpoint-{self.step}")


@pytest.mark.parametrize(("objective", "max_tokens"), [("mle", None), ("gold_s", None), ("gold_s", 120)])
def test_interrupted_training_resumes_to_the_same_model(tiny_data, tmp_path, monkeypatch, objective, max_tokens):
    data_dir, tokenizer = tiny_data
    budget_batches = []
    original_iter = TokenBudgetBatchSampler.__iter__

    def counting_iter(self):
        for batch in original_iter(self):
            budget_batches.append(len(batch))
            yield batch

    monkeypatch.setattr(TokenBudgetBatchSampler, "__iter__", counting_iter)
    (tmp_path / "tok").mkdir()
    tokenizer.save_pretrained(tmp_path / "tok")
    task = tiny_task(TINY_MODEL)
    task["mle"].update(max_steps=8)
    task["gold"].update(max_steps=8, eval_steps=2, batch_size=16, warmup_steps=1, eval_max_examples=8, sync_every=3)
    task["gold"]["max_tokens"] = max_tokens  # token-budget batches replay exactly too
    task["objectives"] = {"gold_s": {"reward": "s", "floor": 0.1, "baseline": 0.0, "min_weight": 0.1}}
    mle = TrainingJob(
        task, "mle", 1, data_dir / "train.jsonl", data_dir / "valid.jsonl", tmp_path / "tok", tmp_path / "mle", tmp_path / "c0", REPO
    )
    train_mle(mle)

    def run(name: str, callbacks=()) -> Path:
        job = TrainingJob(
            **{**mle.__dict__, "objective": objective, "output_dir": tmp_path / name, "checkpoint_dir": tmp_path / f"ckpt-{name}"}
        )
        job.callbacks = callbacks
        if objective == "mle":
            train_mle(job)
        else:
            rewards = tmp_path / "rewards.parquet"
            if not rewards.exists():
                write_token_nll(tmp_path / "mle", data_dir / "train.jsonl", rewards, task, positions="labels")
            train_gold(job, tmp_path / "mle", rewards)
        return tmp_path / name

    straight = run("straight")
    with pytest.raises(RuntimeError, match="killed after checkpoint-4"):
        run("interrupted", callbacks=(CrashAfterCheckpoint(4),))
    assert not (tmp_path / "interrupted").exists()  # no half-written model directory
    resumed = run("interrupted")
    assert json.loads((resumed / "provenance.json").read_text())["resumed_from"] == "checkpoint-4"
    assert (resumed / "model.safetensors").read_bytes() == (straight / "model.safetensors").read_bytes()

    def dev_bleu(path: Path) -> list[float]:
        return [entry["eval_bleu"] for entry in json.loads((path / "log_history.json").read_text()) if "eval_bleu" in entry]

    assert dev_bleu(resumed) == dev_bleu(straight)
    assert bool(budget_batches) == (max_tokens is not None)  # the token-budget sampler drew the batches


def test_checkpoints_of_other_settings_are_discarded(tmp_path):
    (tmp_path / "checkpoint-10").mkdir(parents=True)
    assert resume_point(tmp_path, {"lr": 1}) is None  # no fingerprint: unknown origin, start over
    (tmp_path / "checkpoint-10").mkdir()
    assert resume_point(tmp_path, {"lr": 1}).endswith("checkpoint-10")
    assert resume_point(tmp_path, {"lr": 2}) is None
    assert not (tmp_path / "checkpoint-10").exists()


def test_length_sorted_batches_cover_every_index_once():
    lengths = [3, 9, 1, 9, 4, 2, 7]
    batches = list(length_sorted_batches(lengths, 3))
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    assert [[lengths[i] for i in batch] for batch in batches] == [[9, 9, 7], [4, 3, 2], [1]]


def test_token_budget_batches_keep_the_budget_and_replay_per_epoch():
    lengths = [5, 12, 3, 8, 8, 20, 1, 7, 9, 4, 16, 2]
    sampler = TokenBudgetBatchSampler(lengths, max_tokens=24, seed=7)
    batches = list(sampler)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    assert all(max(lengths[i] for i in batch) * len(batch) <= 24 for batch in batches)
    # the sorted lengths cut greedily: [1 2 3 4] [5 7 8] [8 9] [12] [16] [20]
    assert sorted(sorted(lengths[i] for i in batch) for batch in batches) == [[1, 2, 3, 4], [5, 7, 8], [8, 9], [12], [16], [20]]
    assert len(sampler) == 6
    assert list(sampler) == batches  # same seed and epoch, same batches
    sampler.set_epoch(1)
    assert list(sampler) != batches and len(list(sampler)) == len(batches)


def test_an_example_over_the_token_budget_is_named():
    with pytest.raises(ValueError, match="training example 1 has 30 tokens, more than max_tokens 24"):
        TokenBudgetBatchSampler([5, 30, 3], max_tokens=24, seed=0)
