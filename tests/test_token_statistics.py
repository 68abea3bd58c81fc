"""TRL's token statistics in every trainer's log lines (training/token_statistics.py), and the names a run
has in W&B and MLflow (training/training_job.py)."""

from __future__ import annotations

import math
import os

import torch

from gold_textgen.training.token_statistics import TokenStatistics
from gold_textgen.training.training_job import TrainingJob, name_in_trackers


class LogCatcher:
    def log(self, logs: dict, *args, **kwargs) -> None:
        self.logged = dict(logs)


class Catching(TokenStatistics, LogCatcher):
    pass


def test_entropy_and_accuracy_are_the_means_over_the_reference_tokens_since_the_last_log_line():
    trainer = Catching()
    vocabulary = 4
    uniform = torch.full((1, 2, vocabulary), -math.log(vocabulary))  # entropy log 4, argmax token 0 (first of ties)
    certain = torch.log(torch.tensor([[[1e-12, 1.0, 1e-12, 1e-12]] * 2]))  # entropy ~0, argmax token 1
    trainer.record_tokens(uniform, torch.tensor([[0, -100]]))  # one token, ranked first
    trainer.record_tokens(certain, torch.tensor([[1, 2]]))  # two tokens, one ranked first
    trainer.log({"loss": 1.0})
    assert math.isclose(trainer.logged["entropy"], math.log(vocabulary) / 3, rel_tol=1e-5)
    assert math.isclose(trainer.logged["mean_token_accuracy"], 2 / 3, rel_tol=1e-6)
    trainer.log({"eval_loss": 1.0})  # evaluation lines get neither
    assert "entropy" not in trainer.logged
    trainer.record_tokens(certain, torch.tensor([[1, 1]]))
    trainer.log({"loss": 1.0})  # the sums start afresh after each training log line
    assert trainer.logged["mean_token_accuracy"] == 1.0 and trainer.logged["entropy"] < 1e-6


def test_logits_normalised_give_the_statistics_of_their_log_probabilities():
    logits = torch.tensor([[[2.0, 0.5, -1.0], [0.0, 3.0, 1.0], [9.0, 9.0, 9.0]]])
    labels = torch.tensor([[0, 2, -100]])
    from_logits, from_logprobs = Catching(), Catching()
    from_logits.record_tokens(logits + 5.0, labels, normalise=True)  # log_softmax ignores the shift
    from_logprobs.record_tokens(torch.log_softmax(logits, dim=-1), labels)
    from_logits.log({"loss": 1.0})
    from_logprobs.log({"loss": 1.0})
    assert math.isclose(from_logits.logged["entropy"], from_logprobs.logged["entropy"], rel_tol=1e-6)
    assert from_logits.logged["mean_token_accuracy"] == from_logprobs.logged["mean_token_accuracy"] == 0.5


def test_a_run_is_named_task_objective_seed_and_grouped_by_its_experiment(tmp_path, monkeypatch):
    for variable in ("WANDB_RUN_GROUP", "MLFLOW_EXPERIMENT_NAME"):
        monkeypatch.delenv(variable, raising=False)
    job = TrainingJob({}, "gold_s", 1, *(tmp_path,) * 6, run_name="demo/gold_s/seed1", run_group="objectives")
    name_in_trackers(job)
    assert os.environ["WANDB_RUN_GROUP"] == os.environ["MLFLOW_EXPERIMENT_NAME"] == "objectives"
    monkeypatch.setenv("WANDB_RUN_GROUP", "mine")
    name_in_trackers(job)
    assert os.environ["WANDB_RUN_GROUP"] == "mine"  # the user's own setting wins
