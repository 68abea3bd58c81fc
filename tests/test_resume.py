"""A training job killed mid-run (SIGKILL, as a cluster's time limit or preemption would end it) resumes
from its last checkpoint when the workflow is rerun, and ends where an uninterrupted run ends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from conftest import REPO, SNAKEMAKE, run_snakemake

from gold_textgen.training.checkpoints import COMPLETE_FILE, FINGERPRINT_FILE

pytestmark = pytest.mark.workflow
MODEL = "results/models/demo/mle/seed1"
CHECKPOINTS = "results/checkpoints/demo/mle/seed1"


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    """The smoke experiment with a longer MLE run (checkpoints every 20 of 120 updates)."""
    settings = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
    settings["experiment"].update(objectives=["mle"], sweep_decoders=[])
    settings["tasks"]["demo"]["mle"].update(max_steps=120, eval_steps=20, early_stopping_patience=100)
    path = tmp_path_factory.mktemp("resume") / "config.yaml"
    path.write_text(yaml.safe_dump(settings))
    return path


def kill_after_checkpoint(workdir: Path, config: Path, step: int, timeout: float = 600) -> None:
    """Start the training job and SIGKILL the whole process tree once checkpoint-`step` is complete."""
    command = [str(SNAKEMAKE), "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), "--cores", "2"]
    process = subprocess.Popen(
        [*command, MODEL, "--configfile", str(config)], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    saved = workdir / CHECKPOINTS / f"checkpoint-{step}" / COMPLETE_FILE  # written last
    deadline = time.monotonic() + timeout
    try:
        while not saved.exists():
            assert process.poll() is None, "training ended before the checkpoint appeared"
            assert time.monotonic() < deadline, "no checkpoint within the timeout"
            time.sleep(0.2)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)


def test_killed_training_resumes_and_matches_an_uninterrupted_run(config, tmp_path):
    reference, interrupted = tmp_path / "uninterrupted", tmp_path / "interrupted"
    run_snakemake(reference, MODEL, "--cores", "2", "--configfile", str(config))

    kill_after_checkpoint(interrupted, config, step=40)
    assert not (interrupted / MODEL).exists()  # the model folder is written only at the end
    run_snakemake(interrupted, "--unlock", "--configfile", str(config))  # a killed driver leaves its lock
    run_snakemake(interrupted, MODEL, "--cores", "2", "--rerun-incomplete", "--configfile", str(config))

    resumed = json.loads((interrupted / MODEL / "provenance.json").read_text())
    expected = json.loads((reference / MODEL / "provenance.json").read_text())
    assert resumed["resumed_from"] in {"checkpoint-40", "checkpoint-60"}  # the kill may land just after the next save
    for key in ("global_step", "best_metric", "best_checkpoint"):
        assert resumed[key] == expected[key]
    evaluations = [
        [e for e in json.loads((d / MODEL / "log_history.json").read_text()) if "eval_bleu" in e] for d in (interrupted, reference)
    ]
    assert [(e["step"], e["eval_bleu"], e["eval_loss"]) for e in evaluations[0]] == [
        (e["step"], e["eval_bleu"], e["eval_loss"]) for e in evaluations[1]
    ]
    assert (interrupted / MODEL / "model.safetensors").read_bytes() == (reference / MODEL / "model.safetensors").read_bytes()
    assert not list((interrupted / CHECKPOINTS).glob("checkpoint-*"))  # a finished run leaves nothing to resume
    assert json.loads((interrupted / CHECKPOINTS / FINGERPRINT_FILE).read_text())["finished"] is True
