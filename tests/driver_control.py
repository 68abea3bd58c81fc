"""Starting and stopping the workflow's driver as a user would, for the stop-and-restart tests (local
and SLURM): a driver in a process group of its own, watched until a training checkpoint is complete."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import yaml
from conftest import REPO, SNAKEMAKE

from gold_textgen.training.checkpoints import COMPLETE_FILE

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
        env={**os.environ, **(env or {})},
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
    alive = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getsid(int(entry.name)) == session and "(zombie)" not in (entry / "status").read_text():
                    alive.append(int(entry.name))
            except (ProcessLookupError, PermissionError, FileNotFoundError):
                continue
    return alive


def wait_until_gone(session: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while session_processes(session):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True
