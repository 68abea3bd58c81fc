"""Multi-process training through torchrun (on CPU here: two workers, gloo), and the job hand-over."""

import json

import pytest
import torch
from conftest import REPO, tiny_task
from settings import TINY_MODEL

from gold_textgen.models.transformer import load_pretrained_model
from gold_textgen.training.launch import job_to_spec, run_training, spec_to_job, worker_count
from gold_textgen.training.training_job import TrainingJob


def tiny_job(tiny_data, tmp_path) -> TrainingJob:
    data_dir, tokenizer = tiny_data
    tokenizer.save_pretrained(tmp_path / "tokenizer")
    task = tiny_task(TINY_MODEL)
    paths = (data_dir / "train.jsonl", data_dir / "valid.jsonl", tmp_path / "tokenizer", tmp_path / "out", tmp_path / "ckpt")
    return TrainingJob(task, "mle", 5, *paths, REPO)


def test_job_survives_the_hand_over_to_the_workers(tiny_data, tmp_path):
    job = tiny_job(tiny_data, tmp_path)
    spec = json.loads(json.dumps(job_to_spec("fine_tune", job, {"start_dir": tmp_path / "mle", "rewards_path": None})))
    kind, again, extra = spec_to_job(spec)
    assert kind == "fine_tune" and again == job and extra == {"start_dir": tmp_path / "mle", "rewards_path": None}


@pytest.mark.parametrize(("visible", "requested", "workers"), [(0, 4, 1), (1, 4, 1), (8, 4, 4), (2, 4, 2), (8, 1, 1)])
def test_one_worker_per_gpu_the_job_asked_for_and_can_see(monkeypatch, visible, requested, workers):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: visible > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: visible)
    assert worker_count(requested) == workers


@pytest.mark.slow
def test_two_workers_train_one_model(tiny_data, tmp_path, monkeypatch):
    # Two workers on CPU (gloo) whatever the machine: on a machine with one GPU, two NCCL ranks would share it.
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    job = tiny_job(tiny_data, tmp_path)
    run_training("mle", job, processes=2)
    provenance = json.loads((job.output_dir / "provenance.json").read_text())
    assert provenance["processes"] == 2 and provenance["global_step"] == 4
    assert load_pretrained_model(job.output_dir) is not None
