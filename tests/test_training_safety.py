"""A run that diverges stops with what to try and keeps its last good checkpoint; checkpoints are rotated
only after the newest is complete."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from conftest import REPO, tiny_task
from settings import TINY_MODEL
from test_training import CrashAfterCheckpoint
from transformers import TrainerCallback

from gold_textgen.checkpoints.resuming import COMPLETE_FILE
from gold_textgen.training.divergence import TrainingDiverged
from gold_textgen.training.mle import train_mle
from gold_textgen.training.training_job import TrainingJob


def mle_job(tiny_data, tmp_path, **mle_settings):
    data_dir, tokenizer = tiny_data
    (tmp_path / "tok").mkdir(exist_ok=True)
    tokenizer.save_pretrained(tmp_path / "tok")
    task = tiny_task(TINY_MODEL)
    task["mle"].update(mle_settings)
    return TrainingJob(
        task, "mle", 1, data_dir / "train.jsonl", data_dir / "valid.jsonl", tmp_path / "tok", tmp_path / "model", tmp_path / "ckpt", REPO
    )


class PoisonWeightsAfter(TrainerCallback):
    """Makes the weights infinite after update `step` (what a learning rate far too high ends in, without
    depending on how fast a given CPU's kernels overflow)."""

    def __init__(self, step: int):
        self.step = step

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if state.global_step == self.step:
            with torch.no_grad():
                for parameter in model.parameters():
                    parameter.fill_(math.inf)


def test_a_diverging_run_stops_with_the_update_and_what_to_try(tiny_data, tmp_path):
    job = mle_job(tiny_data, tmp_path, max_steps=8, eval_steps=2, learning_rate=0.01, max_grad_norm=1.0)
    job.callbacks = (PoisonWeightsAfter(4),)
    with pytest.raises(TrainingDiverged) as stopped:
        train_mle(job)
    message = str(stopped.value)
    # the loss of update 4 was logged before the weights broke; the save of update 4 finds them broken
    assert "is not finite after update 4 (checkpoint-4 is left incomplete, never resumed)" in message, message
    assert "last good checkpoint is" in message and "checkpoint-2" in message
    assert "a lower learning_rate (now 0.01)" in message and "max_grad_norm (now 1.0)" in message
    assert (tmp_path / "ckpt" / "checkpoint-2" / COMPLETE_FILE).exists()
    assert not (tmp_path / "ckpt" / "checkpoint-4" / COMPLETE_FILE).exists()
    assert not (tmp_path / "model").exists()


def test_weights_that_break_between_two_logs_are_never_saved_as_a_good_checkpoint(tiny_data, tmp_path):
    """eval_steps 11 logs every 2 updates (10, 12) and saves at 11: weights broken by update 11, after
    the log of update 10 and before any log sees them, stop the job at the save instead of being kept as
    the complete checkpoint every rerun would resume into."""
    job = mle_job(tiny_data, tmp_path, max_steps=14, eval_steps=11, learning_rate=0.01)
    job.callbacks = (PoisonWeightsAfter(11),)
    with pytest.raises(TrainingDiverged, match="not finite after update 11"):
        train_mle(job)
    assert not (tmp_path / "ckpt" / "checkpoint-11" / COMPLETE_FILE).exists()
    assert not any((path / COMPLETE_FILE).exists() for path in (tmp_path / "ckpt").glob("checkpoint-*"))


def test_a_learning_rate_far_too_high_is_caught(tiny_data, tmp_path):
    """The real thing: no clipping and a learning rate of 1e6 overflow the tiny model within its updates."""
    job = mle_job(tiny_data, tmp_path, max_steps=40, eval_steps=4, learning_rate=1.0e6, max_grad_norm=0.0, warmup_steps=0)
    with pytest.raises(TrainingDiverged, match=r"training diverged: the (loss|grad_norm) logged at update \d+ is (nan|inf)"):
        train_mle(job)


def test_old_checkpoints_are_removed_only_after_the_newest_is_complete(tiny_data, tmp_path, monkeypatch):
    """Every deletion of an old checkpoint happens when the newest one is already marked complete: a job
    killed in between must find a complete checkpoint to resume from, not an incomplete newest one and its
    predecessor deleted (the Trainer's own rotation runs before the marker is written)."""
    import transformers.trainer_utils

    deleted, incomplete_at_deletion = [], []
    remove = transformers.trainer_utils.shutil.rmtree

    def checked_remove(path, *args, **kwargs):
        folder = Path(path).parent
        newest = max(folder.glob("checkpoint-*"), key=lambda checkpoint: int(checkpoint.name.split("-")[1]))
        if not (newest / COMPLETE_FILE).exists():
            incomplete_at_deletion.append((Path(path).name, newest.name))
        deleted.append(Path(path).name)
        return remove(path, *args, **kwargs)

    monkeypatch.setattr(transformers.trainer_utils.shutil, "rmtree", checked_remove)
    job = mle_job(tiny_data, tmp_path, max_steps=8, eval_steps=2, early_stopping_patience=None)
    job.callbacks = (CrashAfterCheckpoint(8),)  # a kill right after checkpoint-8 and its rotation
    with pytest.raises(RuntimeError, match="killed after checkpoint-8"):
        train_mle(job)
    assert deleted and not incomplete_at_deletion, incomplete_at_deletion
    kept = sorted((tmp_path / "ckpt").glob("checkpoint-*"))
    assert len(kept) <= 2 and all((checkpoint / COMPLETE_FILE).exists() for checkpoint in kept)


def test_a_pretrained_models_position_table_is_checked_before_training(tiny_data, tmp_path):
    """Its limit is in its own config, read when the job loads it: a clear error, not an IndexError."""
    from gold_textgen.models.transformer import build_scratch_model

    data_dir, tokenizer = tiny_data
    pretrained = tmp_path / "pretrained"
    build_scratch_model({**TINY_MODEL, "max_position_embeddings": 16}, tokenizer).save_pretrained(pretrained)
    tokenizer.save_pretrained(pretrained)
    task = tiny_task({"kind": "pretrained", "name_or_path": str(pretrained)})
    task.update(max_source_length=24)
    job = TrainingJob(task, "mle", 1, data_dir / "train.jsonl", data_dir / "valid.jsonl", None, tmp_path / "out", tmp_path / "ckpt", REPO)
    with pytest.raises(ValueError, match=r"max_source_length needs 24 positions, but the model .* has 16 \(max_position_embeddings\)"):
        train_mle(job)


def test_references_cut_at_the_length_limit_are_counted_in_the_log(tiny_data, tmp_path, caplog):
    job = mle_job(tiny_data, tmp_path, max_steps=2, eval_steps=2)
    job.task["max_target_length"] = 3
    train_mle(job)
    assert "of 64 training references" in caplog.text and "are longer than max_target_length (3 tokens, EOS included)" in caplog.text
    assert "0 of 64" not in caplog.text


def test_a_reward_cache_holding_nan_is_refused(tiny_data):
    import pandas as pd

    from gold_textgen.data.seq2seq_batches import tokenize_records
    from gold_textgen.training.reward_cache import attach_cached_rewards

    data_dir, tokenizer = tiny_data
    from gold_textgen.runtime.files import read_jsonl

    train_set = tokenize_records(read_jsonl(data_dir / "train.jsonl")[:2], tokenizer, 12, 12)
    rows = [(example, position, token, 0.5) for example, labels in enumerate(train_set["labels"]) for position, token in enumerate(labels)]
    table = pd.DataFrame(rows, columns=["example", "position", "token_id", "nll"])
    attach_cached_rewards(train_set, table)
    table.loc[3, "nll"] = float("nan")
    with pytest.raises(ValueError, match=r"reward cache holds 1 token\(s\) whose p_MLE is not a number .*retrain it"):
        attach_cached_rewards(train_set, table)


def test_a_vocabulary_with_no_word_is_refused():
    from gold_textgen.data.tokenization import train_tokenizer

    with pytest.raises(ValueError, match=r"holds no word.*min_frequency 50"):
        train_tokenizer(["a b c", "a d"], min_frequency=50)


def test_a_damaged_reward_cache_says_how_to_rebuild_it(tmp_path):
    """Every way a cache can stop being what its job wrote is refused where fine-tuning reads it, naming the
    file: cut short, one byte flipped anywhere, written by another program, an NLL below 0 or not a number."""
    import pandas as pd

    from gold_textgen.runtime.checked_parquet import write_checked_parquet
    from gold_textgen.training.reward_cache import read_reward_cache

    cache = tmp_path / "train.parquet"
    rows = 40
    table = pd.DataFrame({"example": [i // 4 for i in range(rows)], "position": [i % 4 for i in range(rows)], "token_id": [5] * rows})
    write_checked_parquet(table.assign(nll=[0.5 + 0.01 * i for i in range(rows)]), cache)
    written = cache.read_bytes()
    assert len(read_reward_cache(cache)) == rows
    cache.write_bytes(written[: len(written) // 2])  # a copy cut short
    with pytest.raises(ValueError, match=r"train\.parquet cannot be read .* delete it and run the workflow again.*rule cache_rewards"):
        read_reward_cache(cache)
    for offset in range(4, len(written) - 8, 11):  # a bit flipped across the file: refused or harmless, never a changed reward
        flipped = bytearray(written)
        flipped[offset] ^= 0x10
        cache.write_bytes(bytes(flipped))
        try:
            assert read_reward_cache(cache).equals(read_reward_cache_of(written, tmp_path)), offset
        except ValueError as error:
            assert "train.parquet" in str(error)
    table.assign(nll=0.5).to_parquet(cache)  # pandas' own parquet: no digest to check
    with pytest.raises(ValueError, match=r"train\.parquet holds no content digest"):
        read_reward_cache(cache)
    for value in (-0.01, float("nan")):  # p_MLE above 1, or no number
        write_checked_parquet(table.assign(nll=[0.5] * 7 + [value] + [0.5] * (rows - 8)), cache)
        with pytest.raises(
            ValueError, match=r"train\.parquet: 1 token\(s\) with an NLL that is not a number or below 0 .*row 7, example 1, position 3"
        ):
            read_reward_cache(cache)


def read_reward_cache_of(data: bytes, folder):
    from gold_textgen.training.reward_cache import read_reward_cache

    path = folder / "intact.parquet"
    path.write_bytes(data)
    return read_reward_cache(path)
