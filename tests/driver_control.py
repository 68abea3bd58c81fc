"""Starting and stopping the workflow's driver as a user would, for the stop-and-restart tests (local
and SLURM): a driver in a process group of its own, watched until a training checkpoint is complete."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import yaml
from conftest import OFFLINE, REPO, SNAKEMAKE, driver_environment

from gold_textgen.checkpoints.resuming import COMPLETE_FILE

MODEL = "results/smoke/models/demo/mle/seed1"
CHECKPOINTS = "results/smoke/checkpoints/demo/mle/seed1"


def long_mle_config(folder: Path, max_steps: int = 120, eval_steps: int = 20) -> Path:
    """The smoke experiment with MLE alone and a longer MLE run (by default checkpoints every 20 of 120 updates)."""
    settings = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
    settings["experiment"].update(objectives=["mle"], sweep_decoders=[])
    settings["tasks"]["demo"]["mle"].update(max_steps=max_steps, eval_steps=eval_steps, early_stopping_patience=100)
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(settings))
    return path


def with_prepared_data(reference: Path, workdir: Path) -> Path:
    """`workdir` holding a finished run's data, tokenizer and Snakemake records but no model: the driver
    started there runs the training job alone (the data jobs are not what these tests stop)."""
    kept = shutil.ignore_patterns("models", "checkpoints", "runs", "train_mle", "locks", "incomplete")
    shutil.copytree(reference, workdir, symlinks=True, ignore=kept)
    return workdir


def start_driver(workdir: Path, config: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """The workflow's driver building the MLE model (`args`: how it runs jobs, `--cores 2` unless given),
    in a session and process group of its own, as a terminal runs it in the foreground; its output goes
    to `<workdir>.driver.log` beside the working directory."""
    command = [str(SNAKEMAKE), "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), *(args or ("--cores", "2"))]
    log = open(Path(workdir).parent / f"{Path(workdir).name}.driver.log", "w")  # noqa: SIM115 (the child writes it)
    return subprocess.Popen(
        [*command, MODEL, "--configfile", str(config)],
        start_new_session=True,
        preexec_fn=default_interrupt,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=driver_environment({**OFFLINE, **(env or {})}),  # as run_snakemake's drivers: their warm-start server
    )


def default_interrupt() -> None:
    """SIGINT as a terminal's foreground process has it: a test suite started in the background of a
    non-interactive shell (CI) inherits it ignored, and Ctrl-C would then reach no one."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for_checkpoint(process: subprocess.Popen, workdir: Path, step: int, timeout: float = 600) -> None:
    saved = workdir / CHECKPOINTS / f"checkpoint-{step}" / COMPLETE_FILE  # written last
    deadline = time.monotonic() + timeout
    while not saved.exists():
        assert process.poll() is None, "training ended before the checkpoint appeared"
        assert time.monotonic() < deadline, "no checkpoint within the timeout"
        time.sleep(0.2)


def session_processes(session: int) -> list[int]:
    """The processes still alive in a session (the driver and the jobs it started)."""
    return [pid for pid in all_processes() if _session_of(pid) == session]


def training_processes(workdir: Path) -> list[int]:
    """The MLE training jobs of `workdir` still alive, by the process id each wrote at the head of its log:
    with warm starts (gold_textgen.runtime.warm_start) the training runs in a fork outside the driver's
    session, while the driver's job process waits for it."""
    logs = Path(workdir).glob("logs/*/train_mle/**/*.log")
    logged = {int(pid) for log in logs for pid in re.findall(r"job environment: .*?\bpid=(\d+)", log.read_text())}
    return sorted(logged & set(all_processes()))


def all_processes() -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit() and alive(int(entry.name))]


def alive(pid: int) -> bool:
    """Whether `pid` is a running process (a zombie has ended)."""
    try:
        return "(zombie)" not in Path(f"/proc/{pid}/status").read_text()
    except (ProcessLookupError, PermissionError, FileNotFoundError):
        return False


def _session_of(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except (ProcessLookupError, PermissionError):
        return None


def wait_until_gone(session: int, timeout: float, workdir: Path | None = None) -> bool:
    """Whether the driver's session, and the training jobs of `workdir` when given, end within `timeout`."""
    deadline = time.monotonic() + timeout
    while session_processes(session) or (workdir is not None and training_processes(workdir)):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True
