"""SLURM time limits from the cost plan (config `cost`): a job whose estimate is too short is killed by
SLURM at its limit, and the rerun resumes it to the model an uninterrupted run ends with.

SLURM's shortest limit is a minute, so the job must train for longer than that, beside an uninterrupted
run of the same length: about four CPU-minutes, more than the suite's time budget on a 2-core CI machine
allows. It runs when GOLD_SLURM_TIME_LIMIT=1 (with the test cluster up):

    GOLD_REQUIRE_SLURM=1 GOLD_SLURM_TIME_LIMIT=1 .venv/bin/pytest tests/slurm/test_slurm_time_limit.py
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import REPO, SNAKEMAKE, run_snakemake
from driver_control import CHECKPOINTS, MODEL, long_mle_config, start_driver
from slurm_cluster import cancel_jobs_in, cluster_profile, require_cluster

pytestmark = [
    pytest.mark.workflow,
    pytest.mark.slurm,
    pytest.mark.skipif(
        os.environ.get("GOLD_SLURM_TIME_LIMIT") != "1",
        reason="minutes of training beside SLURM's one-minute limit: set GOLD_SLURM_TIME_LIMIT=1 to run it",
    ),
]


@pytest.fixture(scope="module")
def cluster():
    require_cluster()


# Updates of the time-limited MLE run: about two minutes of training on one thread here, so that SLURM's
# one-minute limit (enforced within half a minute of it) ends it with checkpoints written and updates left.
TIMED_STEPS = 12000


def too_fast_profile(folder: Path) -> Path:
    """The shipped CPU profile claiming a thousand times this machine's speed: every model job's estimate
    falls under a minute, so its SLURM limit is the floor (cost.minimum_minutes: 1)."""
    profile = yaml.safe_load((REPO / "benchmarks" / "devices" / "cpu-epyc-2core.yaml").read_text())
    for entry in profile["tasks"].values():
        entry["update_s"] /= 1000
        entry["forward_s"] /= 1000
        entry["decode_s"] = {beams: seconds / 1000 for beams, seconds in entry["decode_s"].items()}
    profile["job_start_s"] /= 1000
    path = folder / "too_fast.yaml"
    path.write_text(yaml.safe_dump(profile))
    return path


def test_a_job_past_its_estimated_runtime_is_killed_by_slurm_and_the_rerun_resumes_it(cluster, tmp_path):
    """cost.device_profile sets each model job's SLURM time limit from its estimate: with a profile that
    underestimates it, the MLE job (about two minutes here) gets one minute and SLURM kills it at that limit;
    the rerun, with runtimes by size class, resumes it from its last checkpoint and ends with the model an
    uninterrupted run (started beside it, locally) ends with, to the byte."""
    config = long_mle_config(tmp_path, max_steps=TIMED_STEPS, eval_steps=TIMED_STEPS // 10)
    settings = yaml.safe_load(config.read_text())
    limited = tmp_path / "limited.yaml"
    limited.write_text(yaml.safe_dump({**settings, "cost": {"device_profile": str(too_fast_profile(tmp_path)), "minimum_minutes": 1}}))
    reference_dir = tmp_path / "reference"
    reference = start_driver(reference_dir, config, "--cores", "1")
    profile = str(cluster_profile(tmp_path))
    workdir = tmp_path / "run"
    try:
        driver = [str(SNAKEMAKE), "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), "--profile", profile]
        first = subprocess.run(
            [*driver, MODEL, "--configfile", str(limited)],
            capture_output=True,
            text=True,
            timeout=900,
            env={key: value for key, value in os.environ.items() if key != "CUDA_VISIBLE_DEVICES"},
        )
        assert first.returncode != 0, "the MLE job ended within its one-minute limit: TIMED_STEPS is too small for this machine"
        assert "runtime=1," in first.stdout + first.stderr, "the MLE job did not ask for the one-minute limit its estimate gives"
        slurm_logs = "".join(log.read_text(errors="replace") for log in (workdir / ".snakemake" / "slurm_logs").rglob("*.log"))
        assert "TIME LIMIT" in slurm_logs, f"SLURM did not end the job at its time limit:\n{(first.stdout + first.stderr)[-2000:]}"
        assert any((workdir / CHECKPOINTS).glob("checkpoint-*")), "the killed job left no checkpoint to resume from"

        run_snakemake(workdir, "--profile", profile, MODEL, "--configfile", str(config), timeout=900, env={"CUDA_VISIBLE_DEVICES": None})
    finally:
        cancel_jobs_in(workdir)
    assert reference.wait(timeout=900) == 0, "the uninterrupted local run failed"
    resumed = json.loads((workdir / MODEL / "provenance.json").read_text())
    expected = json.loads((reference_dir / MODEL / "provenance.json").read_text())
    assert resumed["resumed_from"].startswith("checkpoint-")
    for key in ("global_step", "best_metric", "best_checkpoint"):
        assert resumed[key] == expected[key]
    weights = f"{MODEL}/model.safetensors"
    assert (workdir / weights).read_bytes() == (reference_dir / weights).read_bytes()
