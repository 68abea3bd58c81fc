"""A training job killed mid-run (SIGKILL, as a cluster's time limit or preemption would end it) resumes
from its last checkpoint when the workflow is rerun, and ends where an uninterrupted run ends."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from conftest import run_snakemake
from driver_control import (
    CHECKPOINTS,
    MODEL,
    long_mle_config,
    start_driver,
    training_processes,
    wait_for_checkpoint,
    wait_until_gone,
    with_prepared_data,
)
from package_copies import edited_package

from gold_textgen.checkpoints.resuming import FINGERPRINT_FILE

pytestmark = [pytest.mark.workflow, pytest.mark.slow]


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    return long_mle_config(tmp_path_factory.mktemp("resume"))


def kill_after_checkpoint(workdir: Path, config: Path, step: int) -> None:
    """Start the training job and SIGKILL the whole process tree once checkpoint-`step` is complete."""
    process = start_driver(workdir, config)
    try:
        wait_for_checkpoint(process, workdir, step)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)


@pytest.fixture(scope="module")
def reference(config, tmp_path_factory) -> Path:
    """The same MLE run, never interrupted."""
    workdir = tmp_path_factory.mktemp("uninterrupted")
    run_snakemake(workdir, MODEL, "--cores", "2", "--configfile", str(config))
    return workdir


def assert_resumed_to_the_uninterrupted_model(resumed_dir: Path, reference: Path, checkpoints: set[str]) -> None:
    resumed = json.loads((resumed_dir / MODEL / "provenance.json").read_text())
    expected = json.loads((reference / MODEL / "provenance.json").read_text())
    assert resumed["resumed_from"] in checkpoints
    for key in ("global_step", "best_metric", "best_checkpoint"):
        assert resumed[key] == expected[key]
    evaluations = [
        [e for e in json.loads((d / MODEL / "log_history.json").read_text()) if "eval_bleu" in e] for d in (resumed_dir, reference)
    ]
    assert [(e["step"], e["eval_bleu"], e["eval_loss"]) for e in evaluations[0]] == [
        (e["step"], e["eval_bleu"], e["eval_loss"]) for e in evaluations[1]
    ]
    assert (resumed_dir / MODEL / "model.safetensors").read_bytes() == (reference / MODEL / "model.safetensors").read_bytes()
    assert not list((resumed_dir / CHECKPOINTS).glob("checkpoint-*"))  # a finished run leaves nothing to resume
    assert json.loads((resumed_dir / CHECKPOINTS / FINGERPRINT_FILE).read_text())["finished"] is True
    assert not list((resumed_dir / "results").rglob("*.tmp")), "a half-written file or folder survived"


def test_killed_training_resumes_and_matches_an_uninterrupted_run(config, reference, tmp_path):
    interrupted = with_prepared_data(reference, tmp_path / "interrupted")
    kill_after_checkpoint(interrupted, config, step=40)
    assert not (interrupted / MODEL).exists()  # the model folder is written only at the end
    run_snakemake(interrupted, "--unlock", "--configfile", str(config))  # a killed driver leaves its lock
    run_snakemake(interrupted, MODEL, "--cores", "2", "--rerun-incomplete", "--configfile", str(config))
    assert_resumed_to_the_uninterrupted_model(interrupted, reference, {"checkpoint-40", "checkpoint-60"})


def test_a_damaged_newest_checkpoint_is_skipped_and_the_run_ends_as_an_uninterrupted_one(config, reference, tmp_path):
    """Killed after checkpoint-40, whose weights are then cut short (a disk that filled): the rerun names the
    file, resumes from the checkpoint kept before it and ends with the uninterrupted run's model."""
    damaged = with_prepared_data(reference, tmp_path / "damaged")
    kill_after_checkpoint(damaged, config, step=40)
    weights = damaged / CHECKPOINTS / "checkpoint-40" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    run_snakemake(damaged, "--unlock", "--configfile", str(config))
    run_snakemake(damaged, MODEL, "--cores", "2", "--rerun-incomplete", "--configfile", str(config))
    assert_resumed_to_the_uninterrupted_model(damaged, reference, {"checkpoint-20"})
    logs = "".join(path.read_text() for path in (damaged / "logs").rglob("*.log"))
    assert "not resuming from checkpoint" in logs and "model.safetensors has 1000 bytes" in logs


def test_a_killed_job_whose_code_was_edited_restarts_from_scratch_with_the_new_code(reference, tmp_path):
    """Killed at a checkpoint, then the code it runs edited (a line that runs, in the MLE stage): the rerun
    does not resume the old code's checkpoint; it trains from the first update to its last, and its
    provenance and the checkpoints' run identity hold the new code's digest (a 40-update run: the data
    are the reference's)."""
    short = long_mle_config(tmp_path, max_steps=40, eval_steps=20)
    workdir = with_prepared_data(reference, tmp_path / "edited")
    kill_after_checkpoint(workdir, short, step=20)
    env = edited_package(tmp_path, "training/mle.py", "\ndef ", "\nEDITED_AFTER_THE_KILL = True\n\n\ndef ")
    run_snakemake(workdir, "--unlock", "--configfile", str(short), env=env)
    run_snakemake(workdir, MODEL, "--cores", "2", "--rerun-incomplete", "--configfile", str(short), env=env)
    edited = json.loads((workdir / MODEL / "provenance.json").read_text())
    original = json.loads((reference / MODEL / "provenance.json").read_text())
    assert edited.get("resumed_from") is None and edited["global_step"] == 40
    assert edited["code_version"] != original["code_version"]
    assert json.loads((workdir / CHECKPOINTS / FINGERPRINT_FILE).read_text())["identity"]["code"] == edited["code_version"]


# docs/guide/running.md, "Stopping a run": what each way of stopping the driver does to a running training job.


def test_ctrl_c_stops_the_driver_and_its_jobs_now_and_a_restart_resumes(config, reference, tmp_path):
    """Ctrl-C in a terminal sends SIGINT to the foreground process group: the driver and its jobs."""
    workdir = with_prepared_data(reference, tmp_path / "ctrl_c")
    process = start_driver(workdir, config)
    wait_for_checkpoint(process, workdir, step=40)
    os.killpg(process.pid, signal.SIGINT)
    assert wait_until_gone(process.pid, timeout=60, workdir=workdir), "Ctrl-C left the driver or its training job running"
    assert process.wait() != 0
    assert not (workdir / MODEL).exists()
    run_snakemake(workdir, MODEL, "--cores", "2", "--rerun-incomplete", "--configfile", str(config))  # no --unlock needed
    assert_resumed_to_the_uninterrupted_model(workdir, reference, {"checkpoint-40", "checkpoint-60", "checkpoint-80"})


def test_sigterm_to_the_driver_lets_the_running_job_finish_first(config, reference, tmp_path):
    """`kill <driver>` (SIGTERM) is Snakemake's graceful stop: no new jobs, the running one ends normally."""
    workdir = with_prepared_data(reference, tmp_path / "sigterm")
    process = start_driver(workdir, config)
    wait_for_checkpoint(process, workdir, step=40)
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=600)
    assert wait_until_gone(process.pid, timeout=30, workdir=workdir)
    assert (workdir / MODEL / "model.safetensors").read_bytes() == (reference / MODEL / "model.safetensors").read_bytes()
    nothing = run_snakemake(workdir, "-n", MODEL, "--configfile", str(config))
    assert "Nothing to be done" in nothing.stdout + nothing.stderr


def test_a_killed_job_fails_its_driver_and_a_restart_resumes(config, reference, tmp_path):
    """The training process alone SIGKILLed (the out-of-memory killer, a node failure): the driver reports
    the failed job and exits; the next run resumes from the last complete checkpoint."""
    workdir = with_prepared_data(reference, tmp_path / "job_killed")
    process = start_driver(workdir, config)
    wait_for_checkpoint(process, workdir, step=40)
    training = training_processes(workdir)
    assert training, "no training job alive at its checkpoint"
    for pid in training:  # the process that trains, as the out-of-memory killer would pick it
        os.kill(pid, signal.SIGKILL)
    assert process.wait(timeout=120) != 0
    assert not (workdir / MODEL).exists()
    run_snakemake(workdir, MODEL, "--cores", "2", "--rerun-incomplete", "--configfile", str(config))
    assert_resumed_to_the_uninterrupted_model(workdir, reference, {"checkpoint-40", "checkpoint-60", "checkpoint-80"})
