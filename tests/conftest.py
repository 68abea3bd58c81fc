"""Shared test helpers: the repository paths, a Snakemake runner with a hard timeout, a tiny training task."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

# The test workers and the workflow jobs they start share few cores: OpenMP threads that spin while they
# wait for work (libgomp's default) burn the cores the other processes need. A two-thread training job
# beside two busy processes used twice the CPU time of a one-thread job when spinning, a sixth more when its
# threads sleep instead. Set before torch starts OpenMP; every job started from the tests inherits it.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch
import yaml
from filelock import FileLock
from settings import demo_spec
from snakemake_in_process import snakemake_in_process

from gold_textgen.config.layers import merged_config
from gold_textgen.config.schema import validate_config
from gold_textgen.config.views import task_config
from gold_textgen.cost.dry_run import job_counts  # noqa: F401  (the tests import it from here)
from gold_textgen.cost.planned_cost import cost_report
from gold_textgen.data.demo_task import generate_split
from gold_textgen.data.tokenization import train_tokenizer, training_texts
from gold_textgen.runtime.files import write_jsonl
from gold_textgen.runtime.logs import freeze_imported_objects

# The environment drivers start from: the session's, before any test's imports add to it (lm-eval sets
# HF_XET_HIGH_PERFORMANCE when imported), so that drivers of the same settings share one warm-start server.
SESSION_ENVIRONMENT = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")

# The in-process tests train and decode models of a few thousand parameters, where intra-op threads only
# add synchronisation: on a 2-core machine a test ran 4x slower with two threads than with one while a
# Snakemake job shared the cores. Workflow jobs set their own threads (runtime/model_process.py).
torch.set_num_threads(1)
# The test processes hold torch's and transformers' objects for their whole life, as a workflow step does:
# out of the collector's reach, as there (gold_textgen.runtime.logs.freeze_imported_objects).
freeze_imported_objects()


# The order in which pytest-xdist hands the test files to its workers (Makefile: `--dist loadfile
# --no-loadscope-reorder`): the longest first, so that no worker picks up a long file when the others are
# done; the smoke run's first user first (it builds the run that later files wait for), then the long files
# that do not need it, so that no worker waits for the smoke run while another builds it; the short files
# last, in collection order, to fill the gaps.
LONGEST_FIRST = (
    "slurm/test_slurm_time_limit.py",  # minutes, mostly waiting for SLURM, when GOLD_SLURM_TIME_LIMIT=1
    "test_smoke_outputs.py",
    "slurm/test_slurm.py",
    "test_resume.py",
    "test_local_example.py",
    "test_training.py",
    "test_recurrent_models.py",
    "test_rebuilds.py",
    "test_workflow_experiments.py",
    "test_workflow_code_identity.py",
    "test_docs.py",
    "test_report.py",
    "test_workflow.py",
    "test_causal_workflow.py",
    "test_cli.py",
    "test_reproducibility.py",
    "test_standard_models_workflow.py",
    "test_trainer_losses.py",
    "test_sft_command.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.path.relative_to(REPO / "tests").as_posix()
        return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: each file's tests keep their order


# What every driver a test starts runs with (the hubs are out of reach; the warm-start server is shared by
# the drivers of one environment).
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def run_snakemake(
    workdir: Path, *args: str, timeout: int = 900, check: bool = True, env: dict[str, str | None] | None = None
) -> subprocess.CompletedProcess:
    """Run the project's workflow in `workdir` (outputs land there); every call has a hard timeout (the
    process is killed, not asked to stop: Snakemake waiting on cluster jobs may ignore SIGTERM). `env`
    adds variables to the environment, or removes those given as None. The driver runs in this process
    (tests/snakemake_in_process.py), its jobs in processes of their own, unless it submits to SLURM (a
    `--profile`) or `env` sets PYTHONPATH (another copy of the package)."""
    command = [str(SNAKEMAKE), "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), *args]
    environment = driver_environment({**OFFLINE, **(env or {})})
    if "--profile" not in args and "PYTHONPATH" not in (env or {}):
        result = snakemake_in_process(command, environment, timeout)
    else:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=environment)
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed ({result.returncode}):\n{result.stdout[-4000:]}\n{result.stderr[-6000:]}")
    return result


def driver_environment(changes: dict[str, str | None] | None = None) -> dict[str, str]:
    """The environment of a workflow driver a test starts: the session's (SESSION_ENVIRONMENT), with
    `changes` (None removes a variable). Drivers with the same environment share one warm-start server
    (gold_textgen.runtime.warm_start), as a user's runs do."""
    environment = dict(SESSION_ENVIRONMENT)
    for key, value in (changes or {}).items():
        if value is None:
            environment.pop(key, None)
        else:
            environment[key] = value
    return environment


# Shipped overlays and their bases: `paper_*.yaml` go over configs/paper.yaml, `nqg_real_*.yaml` over
# configs/nqg_real.yaml, `local_example_*.yaml` over configs/local_example.yaml (their headers say so).
OVERLAY_BASES = ("paper", "nqg_real", "local_example")


def shipped_layers(name: str) -> list[Path]:
    """The config files a shipped config is used with, after config.yaml: its base first for an overlay."""
    path = REPO / "configs" / name
    for base in OVERLAY_BASES:
        if name.startswith(f"{base}_"):
            return [REPO / "configs" / f"{base}.yaml", path]
    return [path]


def is_overlay(name: str) -> bool:
    return len(shipped_layers(name)) > 1


# The README's table of shipped experiments with their job counts (between these markers).
README_EXPERIMENTS = re.compile(r"<!-- experiments:.*?-->\n(.*?)<!-- /experiments -->", re.S)


CPU_PROFILE = REPO / "benchmarks" / "devices" / "cpu-epyc-2core.yaml"  # the reference machine's profile


def planned_wall(workdir: Path, configs: list[Path], startup_timed: bool = False) -> float:
    """The expected wall time `gold-textgen plan --device <CPU_PROFILE> --all` gives for `configs` (over
    config.yaml) in `workdir` on 2 cores; with `startup_timed` the dry run's duration stands for the
    workflow's start, as in the CLI, else the start counts nothing."""
    start = time.perf_counter()
    configfiles = ["--configfile", *map(str, configs)] if configs else []
    output = run_snakemake(workdir, "-n", "--forceall", "--cores", "2", *configfiles).stdout  # the threads of a run on 2 cores
    startup = time.perf_counter() - start if startup_timed else 0.0
    config = validate_config(merged_config(REPO / "config.yaml", configs))
    return cost_report(config, str(CPU_PROFILE), output, 2, startup, workdir)[1]


def session_folder(tmp_path_factory, worker_id: str) -> Path:
    """A folder every pytest-xdist worker of this session sees (the workers' base folders share a parent
    that belongs to this session only), or the base folder when there are no workers."""
    base = tmp_path_factory.getbasetemp()
    return base if worker_id == "master" else base.parent


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory, worker_id):
    """The smoke experiment run for real once per test session, however many xdist workers ask for it (the
    first builds it under a lock, the others wait and reuse it); the workflow and SLURM tests inspect its
    outputs (or copy it before changing anything)."""
    shared = session_folder(tmp_path_factory, worker_id)
    workdir, finished = shared / "tiny_run", shared / "tiny_run.finished"
    with FileLock(shared / "tiny_run.lock"):
        if not finished.exists():
            shutil.rmtree(workdir, ignore_errors=True)  # a failed attempt of another worker
            run_snakemake(workdir, "--cores", "2", "--configfile", str(REPO / "configs" / "smoke.yaml"))
            finished.touch()
    return workdir


@pytest.fixture
def smoke_config(tmp_path: Path) -> Path:
    """A copy of configs/smoke.yaml the test may edit."""
    target = tmp_path / "smoke.yaml"
    shutil.copy(REPO / "configs" / "smoke.yaml", target)
    return target


# A tiny task for training tests: 64 demo pairs, a 12k-parameter model, a few updates.


@pytest.fixture(scope="module")
def tiny_data(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    spec = demo_spec(num_train=64, num_valid=8, num_test=8, max_length=8)
    for split in ("train", "valid"):
        write_jsonl(root / f"{split}.jsonl", generate_split(spec, split))
    tokenizer = train_tokenizer(training_texts(generate_split(spec, "train")))
    return root, tokenizer


def tiny_task(model: dict) -> dict:
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config["tasks"]["demo"]["model"] = model
    config["tasks"]["demo"]["mle"].update(max_steps=4, eval_steps=2, batch_size=16, warmup_steps=1, eval_max_examples=8)
    config["tasks"]["demo"].update(max_source_length=12, max_target_length=12)
    config["tasks"]["demo"]["generation"]["max_new_tokens"] = 10
    return task_config(validate_config(config), "demo")
