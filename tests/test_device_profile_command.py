"""The command that measures a device profile (benchmarks/device_profile.py), run as a user runs it, reduced
to seconds: on the smoke task's data as the session's smoke run prepared them, a few timed batches, and a
profile that the plan reads back, named after this machine with the commit that measured it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import OFFLINE, REPO, driver_environment, run_snakemake

from benchmarks.device_profile import preparation_command, profile_file
from benchmarks.this_machine import commit
from gold_textgen.config.layers import merged_config
from gold_textgen.config.schema import validate_config
from gold_textgen.cost.device_profile import DeviceProfile
from gold_textgen.cost.planned_cost import cost_report

pytestmark = pytest.mark.workflow
SMOKE = REPO / "configs" / "smoke.yaml"


@pytest.mark.slow
def test_the_device_profile_command_measures_this_machine_and_the_plan_reads_it(tiny_run, tmp_path):
    output = tmp_path / "profile.yaml"
    command = [sys.executable, "-m", "benchmarks.device_profile", "--configfile", str(SMOKE)]
    command += ["--steps", "2", "--warmup", "1", "--loop-updates", "2", "60", "--start-repeats", "1", "--cores", "1"]
    command += ["--workdir", str(tiny_run), "--output", str(output)]  # the session's smoke run holds the data
    # the drivers' environment: the warm starts are timed on the session's warm-start server, already up
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600, env=driver_environment(OFFLINE))
    assert result.returncode == 0, result.stderr[-3000:]
    profile = DeviceProfile.load(output)
    assert profile.device.startswith("cpu: ") and profile.measured["commit"] == commit()
    (task,) = profile.tasks.values()
    assert task["task"] == "demo" and task["update_s"] > 0 and task["fine_tune_update_s"] > 0 and task["decode_s"]
    assert profile.job_start > profile.warm_job_start > 0
    plan = run_snakemake(tiny_run, "-n", "--forceall", "--cores", "2", "--configfile", str(SMOKE)).stdout
    config = validate_config(merged_config(REPO / "config.yaml", [SMOKE]))
    text, wall = cost_report(config, str(output), plan, 2, 0.0, tiny_run)  # what `gold-textgen plan --device` prints
    assert wall > 0 and "train_mle" in text


def test_a_profile_is_named_after_its_device():
    assert profile_file("NVIDIA H200").relative_to(REPO).as_posix() == "benchmarks/devices/nvidia-h200.yaml"
    assert profile_file("cpu: AMD EPYC 7B13, 2 cores").name == "cpu-amd-epyc-7b13-2-cores.yaml"


def test_without_config_files_the_preparation_names_none(tmp_path):
    """`python -m benchmarks.device_profile --output ...` (the README's command for a GPU node) measures
    config.yaml's tasks: its data preparation gets no dangling --configfile, which Snakemake refuses."""
    targets = [tmp_path / "results/demo/data/demo/train.jsonl"]
    assert "--configfile" not in preparation_command(tmp_path, targets, [])
    assert preparation_command(tmp_path, targets, ["a.yaml"])[-3:] == ["results/demo/data/demo/train.jsonl", "--configfile", "a.yaml"]
