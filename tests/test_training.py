"""Training entry points on tiny models: the pretrained-checkpoint path and resumable checkpoints."""

import json
import logging
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, tiny_task
from settings import TINY_MODEL
from transformers import AutoTokenizer, TrainerCallback

from gold_textgen.checkpoints.checkpoint_loading import never_saved_keys, unexplained_missing_keys
from gold_textgen.checkpoints.checkpoint_state import LAGGED_POLICY_FILE, LaggedPolicySync
from gold_textgen.checkpoints.resuming import (
    COMPLETE_FILE,
    FINGERPRINT_FILE,
    CheckpointsInUse,
    claim_checkpoints,
    discard_checkpoints,
    fingerprint,
)
from gold_textgen.config.schema import defaults
from gold_textgen.config.views import training_view
from gold_textgen.data.seq2seq_batches import length_sorted_batches
from gold_textgen.evaluation.token_nll import write_token_nll
from gold_textgen.models.transformer import build_scratch_model, count_parameters, load_pretrained_model
from gold_textgen.runtime.files import read_json, write_jsonl
from gold_textgen.training.fine_tune import fine_tune
from gold_textgen.training.mle import train_mle
from gold_textgen.training.samplers import TokenBudgetBatchSampler
from gold_textgen.training.training_job import TrainingJob, training_arguments


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


def test_a_finished_run_leaves_nothing_to_resume(tiny_data, tmp_path):
    data_dir, tokenizer = tiny_data
    (tmp_path / "tok").mkdir()
    tokenizer.save_pretrained(tmp_path / "tok")
    task = tiny_task(TINY_MODEL)
    job = TrainingJob(
        task, "mle", 1, data_dir / "train.jsonl", data_dir / "valid.jsonl", tmp_path / "tok", tmp_path / "a", tmp_path / "ckpt", REPO
    )
    first = train_mle(job)
    assert first["resumed_from"] is None and not list((tmp_path / "ckpt").glob("checkpoint-*"))
    assert read_json(tmp_path / "ckpt" / FINGERPRINT_FILE)["finished"] is True
    again = train_mle(TrainingJob(**{**job.__dict__, "output_dir": tmp_path / "b"}))  # as `snakemake -f` would
    assert again["resumed_from"] is None and again["global_step"] == first["global_step"]  # a fresh run, not one step more
    assert (tmp_path / "a" / "model.safetensors").read_bytes() == (tmp_path / "b" / "model.safetensors").read_bytes()


class CrashAfterCheckpoint(TrainerCallback):
    """Stands in for a job killed right after a checkpoint was written."""

    def __init__(self, step: int):
        self.step = step

    def on_save(self, args, state, control, **kwargs):
        if state.global_step == self.step:
            raise RuntimeError(f"killed after checkpoint-{self.step}")


@pytest.fixture(scope="module")
def trained_mle(tiny_data, tmp_path_factory):
    """An MLE model with dropout (so a resume must restore the RNG too), its reward cache, and a GOLD-s task
    with 12 updates: 4 per epoch, a checkpoint every 3 (mid-epoch), pi_tilde re-synced every 4. Trained
    once per module; each test reads it through `gold_setup`."""
    data_dir, tokenizer = tiny_data
    tmp_path = tmp_path_factory.mktemp("trained_mle")
    (tmp_path / "tok").mkdir()
    tokenizer.save_pretrained(tmp_path / "tok")
    task = tiny_task({**TINY_MODEL, "dropout": 0.1})
    task["mle"].update(max_steps=8)
    task["fine_tune"].update(max_steps=12, eval_steps=3, batch_size=16, warmup_steps=1, eval_max_examples=8, sync_every=4)
    task["fine_tune"]["early_stopping_patience"] = 100
    task["objectives"] = {
        "gold_s": defaults("objective", reward="s", floor=0.1, min_weight=0.1),
        # a cut-off computed before the first checkpoint and recomputed between the interruptions
        "loss_truncation": defaults("objective", loss="loss_truncation", drop_fraction=0.25, warmup=32, window=40),
        "dft": defaults("objective", loss="dft"),
        "mle_pg": defaults("objective", loss="policy_gradient", baseline=0.05, baseline_margin=0.0),
        "psft": defaults("objective", loss="psft"),  # pi_old: the lagged policy, re-synced every 4, in the checkpoints
        "iw_sft": defaults("objective", loss="iw_sft"),  # reads the reward cache
    }
    mle = TrainingJob(
        task, "mle", 1, data_dir / "train.jsonl", data_dir / "valid.jsonl", tmp_path / "tok", tmp_path / "mle", tmp_path / "c0", REPO
    )
    train_mle(mle)
    rewards = tmp_path / "rewards.parquet"
    write_token_nll(tmp_path / "mle", data_dir / "train.jsonl", rewards, task, positions="labels")
    return mle, rewards


@pytest.fixture
def gold_setup(trained_mle, tmp_path):
    """The module's MLE model copied into the test's own folder, where the test's runs land beside it."""
    mle, rewards = trained_mle
    shutil.copytree(mle.output_dir, tmp_path / "mle")
    return TrainingJob(**{**mle.__dict__, "output_dir": tmp_path / "mle", "checkpoint_dir": tmp_path / "c0"}), rewards


def run_job(base: TrainingJob, rewards: Path, objective: str, name: str, callbacks=()) -> Path:
    root = base.output_dir.parent
    # A training job gets its rule's view of the task (config.views.training_view), as in the workflow.
    task = training_view(base.task, objective)
    job = TrainingJob(
        **{**base.__dict__, "task": task, "objective": objective, "output_dir": root / name, "checkpoint_dir": root / f"ckpt-{name}"}
    )
    job.callbacks = callbacks
    if objective == "mle":
        train_mle(job)
    else:
        fine_tune(job, base.output_dir, rewards)
    return root / name


def training_losses(model_dir: Path) -> list[tuple[int, float]]:
    return [(e["step"], e["loss"]) for e in json.loads((model_dir / "log_history.json").read_text()) if "loss" in e]


@pytest.mark.parametrize(
    "objective", ["loss_truncation", "mle_pg", *(pytest.param(name, marks=pytest.mark.slow) for name in ("dft", "psft", "iw_sft"))]
)
def test_a_peer_objective_interrupted_resumes_to_the_uninterrupted_model(gold_setup, objective):
    mle, rewards = gold_setup
    straight = run_job(mle, rewards, objective, "straight")
    with pytest.raises(RuntimeError, match="killed after checkpoint-6"):
        run_job(mle, rewards, objective, "interrupted", callbacks=(CrashAfterCheckpoint(6),))
    resumed = run_job(mle, rewards, objective, "interrupted")
    assert json.loads((resumed / "provenance.json").read_text())["resumed_from"] == "checkpoint-6"
    assert training_losses(resumed) == training_losses(straight)
    assert (resumed / "model.safetensors").read_bytes() == (straight / "model.safetensors").read_bytes()
    history = json.loads((straight / "log_history.json").read_text())
    if objective == "loss_truncation":  # examples were dropped: the mean weight fell below 1
        assert min(e["mean_weight"] for e in history if "mean_weight" in e) < 1.0


def test_policy_gradient_updates_alternate_with_updates_on_the_references(gold_setup):
    """Logged after every update: the sampled rewards appear at every second update (updates 2, 4, ...)."""
    mle, rewards = gold_setup
    history = json.loads((run_job(mle, rewards, "mle_pg", "pg") / "log_history.json").read_text())
    logged = {entry["step"]: entry for entry in history if "loss" in entry}
    assert sorted(logged) == list(range(1, 13))
    assert [step for step, entry in logged.items() if "mean_sample_reward" in entry] == list(range(2, 13, 2))
    assert all(0.0 <= logged[step]["mean_sample_reward"] <= 1.0 for step in range(2, 13, 2))
    # TRL's token statistics, over the reference tokens of each update on the references
    assert [step for step, entry in logged.items() if "entropy" in entry] == list(range(1, 13, 2))
    vocabulary = len(AutoTokenizer.from_pretrained(mle.tokenizer_path))
    for step in range(1, 13, 2):
        assert 0.0 < logged[step]["entropy"] < math.log(vocabulary) and 0.0 <= logged[step]["mean_token_accuracy"] <= 1.0


def test_mle_logs_tokens_entropy_and_accuracy_and_names_its_run(trained_mle):
    mle, _ = trained_mle
    logged = [entry for entry in json.loads((mle.output_dir / "log_history.json").read_text()) if "loss" in entry]
    assert logged and all(entry["entropy"] > 0.0 and 0.0 <= entry["mean_token_accuracy"] <= 1.0 for entry in logged)
    named = TrainingJob(**{**mle.__dict__, "run_name": "demo/mle/seed1"})
    assert training_arguments(mle.task["mle"], named).run_name == "demo/mle/seed1"


def test_gold_interrupted_three_times_ends_with_the_uninterrupted_model(gold_setup):
    mle, rewards = gold_setup
    straight = run_job(mle, rewards, "gold_s", "straight")
    for step in (3, 6, 9):  # mid-epoch each time; 6 lies between two syncs of pi_tilde (4 and 8)
        with pytest.raises(RuntimeError, match=f"killed after checkpoint-{step}"):
            run_job(mle, rewards, "gold_s", "interrupted", callbacks=(CrashAfterCheckpoint(step),))
        assert not (mle.output_dir.parent / "interrupted").exists()  # no half-written model directory
    resumed = run_job(mle, rewards, "gold_s", "interrupted")
    assert json.loads((resumed / "provenance.json").read_text())["resumed_from"] == "checkpoint-9"
    assert training_losses(resumed) == training_losses(straight)  # every update's loss, bit for bit
    assert (resumed / "model.safetensors").read_bytes() == (straight / "model.safetensors").read_bytes()


def test_a_checkpoint_torn_before_the_lagged_policy_is_written_is_skipped(gold_setup, monkeypatch):
    mle, rewards = gold_setup
    straight = run_job(mle, rewards, "gold_s", "straight")
    original = LaggedPolicySync.on_save

    def killed_before_pi_tilde(self, args, state, control, **kwargs):
        if state.global_step == 6:
            raise RuntimeError("killed while saving checkpoint-6")
        return original(self, args, state, control, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(LaggedPolicySync, "on_save", killed_before_pi_tilde)
        with pytest.raises(RuntimeError, match="killed while saving"):
            run_job(mle, rewards, "gold_s", "torn")
    torn = mle.output_dir.parent / "ckpt-torn" / "checkpoint-6"
    assert (torn / "model.safetensors").exists() and not (torn / LAGGED_POLICY_FILE).exists()
    resumed = run_job(mle, rewards, "gold_s", "torn")
    assert json.loads((resumed / "provenance.json").read_text())["resumed_from"] == "checkpoint-3"
    assert training_losses(resumed) == training_losses(straight)
    assert (resumed / "model.safetensors").read_bytes() == (straight / "model.safetensors").read_bytes()


@pytest.mark.parametrize("damage", ["truncated", pytest.param("edited", marks=pytest.mark.slow)])
def test_a_damaged_newest_checkpoint_is_named_and_the_newest_intact_one_resumed(gold_setup, caplog, damage):
    """Killed after checkpoint-9, then its weights damaged (cut in half, or one value changed with the size
    kept, as an edit by hand): the rerun names the file, removes that checkpoint and resumes from
    the newest intact one (the best, kept beside it) to the uninterrupted run's model."""
    from safetensors.torch import load_file, save_file

    mle, rewards = gold_setup
    straight = run_job(mle, rewards, "gold_s", "straight")
    with pytest.raises(RuntimeError, match="killed after checkpoint-9"):
        run_job(mle, rewards, "gold_s", "damaged", callbacks=(CrashAfterCheckpoint(9),))
    weights = mle.output_dir.parent / "ckpt-damaged" / "checkpoint-9" / "model.safetensors"
    if damage == "truncated":
        weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    else:
        tensors = load_file(weights)
        name = next(iter(tensors))
        tensors[name] = tensors[name] + 0.5
        save_file(tensors, weights, metadata={"format": "pt"})
    with caplog.at_level(logging.WARNING):
        resumed = run_job(mle, rewards, "gold_s", "damaged")
    assert "not resuming from checkpoint" in caplog.text and "model.safetensors" in caplog.text
    assert json.loads((resumed / "provenance.json").read_text())["resumed_from"] in ("checkpoint-3", "checkpoint-6")
    assert (resumed / "model.safetensors").read_bytes() == (straight / "model.safetensors").read_bytes()


@pytest.mark.parametrize("max_tokens", [None, pytest.param(120, marks=pytest.mark.slow)])
def test_interrupted_mle_resumes_to_the_same_model(tiny_data, tmp_path, monkeypatch, max_tokens):
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
    task = tiny_task({**TINY_MODEL, "dropout": 0.1})
    task["mle"].update(max_steps=10, eval_steps=3, max_tokens=max_tokens)  # token-budget batches replay exactly too
    base = TrainingJob(
        task, "mle", 1, data_dir / "train.jsonl", data_dir / "valid.jsonl", tmp_path / "tok", tmp_path / "unused", tmp_path / "c", REPO
    )
    straight = run_job(base, None, "mle", "straight")
    with pytest.raises(RuntimeError, match="killed after checkpoint-6"):
        run_job(base, None, "mle", "interrupted", callbacks=(CrashAfterCheckpoint(6),))
    resumed = run_job(base, None, "mle", "interrupted")
    assert json.loads((resumed / "provenance.json").read_text())["resumed_from"] == "checkpoint-6"
    assert training_losses(resumed) == training_losses(straight)
    assert (resumed / "model.safetensors").read_bytes() == (straight / "model.safetensors").read_bytes()
    assert bool(budget_batches) == (max_tokens is not None)  # the token-budget sampler drew the batches


def test_changed_training_data_starts_fresh_instead_of_resuming(tiny_data, tmp_path, caplog):
    data_dir, tokenizer = tiny_data
    (tmp_path / "tok").mkdir()
    tokenizer.save_pretrained(tmp_path / "tok")
    train = tmp_path / "train.jsonl"
    shutil.copy(data_dir / "train.jsonl", train)
    task = tiny_task(TINY_MODEL)
    job = TrainingJob(task, "mle", 1, train, data_dir / "valid.jsonl", tmp_path / "tok", tmp_path / "a", tmp_path / "ckpt", REPO)
    with pytest.raises(RuntimeError, match="killed after checkpoint-2"):
        train_mle(TrainingJob(**{**job.__dict__, "callbacks": (CrashAfterCheckpoint(2),)}))
    records = [json.loads(line) for line in train.read_text().splitlines()]
    write_jsonl(train, [{**r, "target": " ".join(reversed(r["target"].split()))} for r in records])  # every target replaced
    with caplog.at_level(logging.INFO, logger="gold_textgen.checkpoints.resuming"):
        summary = train_mle(job)
    assert summary["resumed_from"] is None
    assert "changed: input 'train'" in caplog.text


def test_a_checkpoint_of_other_code_is_never_resumed(tiny_data, tmp_path, caplog):
    """A run killed at a checkpoint, the code edited (the rule's code digest changes), the job run again:
    it trains afresh with the new code and says why, instead of finishing the old code's run with the new."""
    data_dir, tokenizer = tiny_data
    (tmp_path / "tok").mkdir()
    tokenizer.save_pretrained(tmp_path / "tok")
    paths = (data_dir / "train.jsonl", data_dir / "valid.jsonl", tmp_path / "tok", tmp_path / "a", tmp_path / "ckpt", REPO)
    before = TrainingJob(tiny_task(TINY_MODEL), "mle", 1, *paths, code_version="code-before")
    with pytest.raises(RuntimeError, match="killed after checkpoint-2"):
        train_mle(TrainingJob(**{**before.__dict__, "callbacks": (CrashAfterCheckpoint(2),)}))
    with caplog.at_level(logging.INFO, logger="gold_textgen.checkpoints.resuming"):
        summary = train_mle(TrainingJob(**{**before.__dict__, "code_version": "code-after"}))
    assert summary["resumed_from"] is None
    assert "starting fresh" in caplog.text and "code changed (code-before -> code-after)" in caplog.text
    assert json.loads((tmp_path / "a" / "provenance.json").read_text())["code_version"] == "code-after"


def test_loading_the_best_checkpoint_warns_only_of_weights_a_checkpoint_should_hold(tiny_data, tmp_path, caplog):
    """Tied embeddings and sinusoidal positions are never saved; their absence is no news. Any other
    missing weight still is."""
    import transformers

    data_dir, tokenizer = tiny_data
    (tmp_path / "tok").mkdir()
    tokenizer.save_pretrained(tmp_path / "tok")
    job = TrainingJob(
        tiny_task(TINY_MODEL),
        "mle",
        1,
        data_dir / "train.jsonl",
        data_dir / "valid.jsonl",
        tmp_path / "tok",
        tmp_path / "a",
        tmp_path / "c",
        REPO,
    )
    transformers.logging.enable_propagation()
    try:
        with caplog.at_level(logging.WARNING, logger="transformers"):
            train_mle(job)
    finally:
        transformers.logging.disable_propagation()
    assert "There were missing keys" not in caplog.text
    model = load_pretrained_model(tmp_path / "a")
    never_saved = sorted(never_saved_keys(model))
    assert {"lm_head.weight", "model.encoder.embed_positions.weight"} <= set(never_saved)
    assert unexplained_missing_keys(model, [*never_saved, "model.encoder.layers.0.fc1.weight"]) == ["model.encoder.layers.0.fc1.weight"]


def test_checkpoints_of_another_identity_or_incomplete_are_not_resumed(tmp_path):
    identity = {"settings": {"lr": 1}, "inputs": {"train": "abc"}}
    (tmp_path / "checkpoint-10").mkdir(parents=True)
    assert claim_checkpoints(tmp_path, identity) is None  # no fingerprint: unknown origin, start over
    assert not (tmp_path / "checkpoint-10").exists()
    for step in (10, 20):
        (tmp_path / f"checkpoint-{step}").mkdir()
    (tmp_path / "checkpoint-10" / COMPLETE_FILE).write_text('{"files": {}}')
    assert claim_checkpoints(tmp_path, identity).endswith("checkpoint-10")  # 20 was never completed
    assert not (tmp_path / "checkpoint-20").exists()
    assert claim_checkpoints(tmp_path, {**identity, "inputs": {"train": "abd"}}) is None
    assert not (tmp_path / "checkpoint-10").exists()


def test_the_log_names_each_setting_changed_since_the_finished_run(tmp_path, caplog):
    """Snakemake deletes a model before retraining it; the new run's log says what changed since."""

    def identity(no_repeat: int) -> dict:
        generation = {"no_repeat_ngram_size": no_repeat, "max_new_tokens": 50}
        return {"settings": {"task": {"generation": generation}, "seed": 1}, "inputs": {"train": "abc"}}

    first, second = identity(0), identity(3)
    claim_checkpoints(tmp_path, first)
    discard_checkpoints(tmp_path)
    with caplog.at_level(logging.INFO, logger="gold_textgen.checkpoints.resuming"):
        assert claim_checkpoints(tmp_path, second) is None
    assert "finished changed since: the training settings (task.generation.no_repeat_ngram_size: 0 -> 3)" in caplog.text
    assert "max_new_tokens" not in caplog.text and "input 'train'" not in caplog.text
    discard_checkpoints(tmp_path)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="gold_textgen.checkpoints.resuming"):
        claim_checkpoints(tmp_path, second)
    assert "finished with the same settings and inputs" in caplog.text


# The living trainer holds the lock claim_checkpoints takes (trainer_lock.py: no torch to import, so it
# starts in a fraction of a second).
HOLD_CHECKPOINTS = """
import sys, time
from gold_textgen.checkpoints.trainer_lock import lock_checkpoints
lock_checkpoints(sys.argv[1])
print("claimed", flush=True)
time.sleep(120)
"""


def test_a_second_trainer_on_a_living_trainers_checkpoints_stops_and_names_it(tmp_path):
    """An orphaned training job still writes its checkpoints: a rerun must not resume from them beside it."""
    folder = tmp_path / "ckpt"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_CHECKPOINTS, str(folder)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "claimed"
        # The rerun's claim (here in the test's own process: a lock held by another process is what counts).
        with pytest.raises(CheckpointsInUse, match=f"is in use by process {holder.pid} on host"):
            claim_checkpoints(folder, {"settings": {}, "inputs": {}})
    finally:
        holder.kill()
        holder.wait()
    # The kernel dropped the dead holder's lock: a restart claims the folder and resumes as usual from the
    # checkpoint the dead run left, with the identity it recorded.
    identity = {"settings": {}, "inputs": {}}
    (folder / FINGERPRINT_FILE).write_text(json.dumps({"fingerprint": fingerprint(identity), "identity": identity}))
    (folder / "checkpoint-5").mkdir()
    (folder / "checkpoint-5" / COMPLETE_FILE).write_text('{"files": {}}')
    assert claim_checkpoints(folder, identity).endswith("checkpoint-5")


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


def test_a_loaded_model_keeps_its_sinusoidal_positions_fixed(tiny_data, tmp_path):
    _, tokenizer = tiny_data
    build_scratch_model(TINY_MODEL, tokenizer).save_pretrained(tmp_path)
    loaded = load_pretrained_model(tmp_path)
    positions = [name for name, parameter in loaded.named_parameters() if "embed_positions" in name]
    assert positions and not any(parameter.requires_grad for name, parameter in loaded.named_parameters() if name in positions)


def test_training_writes_tensorboard_curves_with_golds_own_scalars(gold_setup, monkeypatch):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    monkeypatch.delenv("TENSORBOARD_LOGGING_DIR", raising=False)
    mle, rewards = gold_setup
    runs = mle.output_dir.parent / "runs"
    job = TrainingJob(
        **{**mle.__dict__, "objective": "gold_s", "output_dir": runs.parent / "tb", "checkpoint_dir": runs.parent / "ckpt-tb"},
    )
    job.log_dir, job.logger = runs / "gold_s" / "seed1", "tensorboard"
    fine_tune(job, mle.output_dir, rewards)
    events = EventAccumulator(str(job.log_dir))
    events.Reload()
    scalars = set(events.Tags()["scalars"])
    expected = {"train/loss", "train/nll", "train/mean_weight", "train/mean_return", "train/share_weight_at_u", "train/share_reward_at_c"}
    assert expected | {"eval/bleu"} <= scalars, scalars
    assert [event.step for event in events.Scalars("eval/bleu")] == [3, 6, 9, 12]
