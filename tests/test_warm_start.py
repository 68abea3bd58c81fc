"""Warm starts (gold_textgen.runtime.warm_start): a job handed over runs in a fork of a server that has torch
imported, with the job's own folder, environment, arguments and streams; its exit, its signals and its
death travel between the fork and the process Snakemake started; jobs that find the server starting wait for
it; off, under SLURM, or when the server dies before it is up, the job runs where it was started."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from driver_control import alive, default_interrupt

JOB = """
import json, os, sys, time
from gold_textgen.runtime.warm_start import hand_over

hand_over()
from gold_textgen.runtime.logs import job_environment

facts = {"pid": os.getpid(), "parent": os.getppid(), "cwd": os.getcwd(), "argv": sys.argv, "mark": os.environ.get("JOB_MARK"),
         "warm": "transformers.modeling_utils" in sys.modules, "path0": sys.path[0], "log": job_environment(),
         "replace": os.environ.get("GOLD_TEXTGEN_REPLACE")}
action = sys.argv[1]
if action == "report":
    facts["stdin"] = sys.stdin.readline().strip()
    print(json.dumps(facts), flush=True)
    print("to stderr", file=sys.stderr)
    sys.exit(3)
if action == "wait":
    print(json.dumps(facts), flush=True)
    time.sleep(120)
if action == "fail":
    raise ValueError("the job failed")
"""


@pytest.fixture(scope="module")
def server_folder():
    """A temporary folder of its own (short enough for a socket path) for this module's server, which is
    stopped at the end."""
    folder = Path(tempfile.mkdtemp(prefix="warm", dir="/tmp"))
    yield folder
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(folder) in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    os.kill(int(entry.name), signal.SIGKILL)
            except (FileNotFoundError, ProcessLookupError, PermissionError):
                continue
    shutil.rmtree(folder, ignore_errors=True)


def job_environment(server_folder: Path, **changes: str) -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_", "SLURM_", "GOLD_WARM"))}
    return {**environment, "TMPDIR": str(server_folder), "JOB_MARK": "mine", **changes}


def start_job(server_folder: Path, folder: Path, action: str, **changes: str) -> subprocess.Popen:
    script = folder / "job.py"
    script.write_text(JOB)
    return subprocess.Popen(
        [sys.executable, "job.py", action, "--flag"],
        cwd=folder,
        env=job_environment(server_folder, **changes),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_interrupt,  # Ctrl-C as in a terminal, even under a CI shell that ignores it
    )


@pytest.fixture(scope="module")
def warm_server(server_folder, tmp_path_factory):
    """The first two jobs, started together before any server is up: one of them starts the server, and both
    wait for it and run in forks of that one server (not in place beside it, which would import the same
    libraries three times at once)."""
    jobs = [start_job(server_folder, tmp_path_factory.mktemp("first"), "report") for _ in range(2)]
    facts = []
    for job in jobs:
        out, _ = job.communicate("hello", timeout=180)
        assert job.returncode == 3
        facts.append(json.loads(out))
    assert all(fact["warm"] for fact in facts), "a job that found the server starting ran in place"
    assert facts[0]["parent"] == facts[1]["parent"], "the two jobs ran in forks of different servers"
    assert len(list(server_folder.rglob("*.sock"))) == 1
    return server_folder


def wait_gone(pid: int, timeout: float = 20) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@pytest.mark.slow
def test_a_handed_over_job_runs_warm_with_its_own_folder_environment_arguments_and_streams(warm_server, tmp_path):
    job = start_job(warm_server, tmp_path, "report")
    out, err = job.communicate("hello", timeout=60)
    facts = json.loads(out)
    assert job.returncode == 3
    assert facts["warm"] and facts["pid"] != job.pid  # a fork of the server, transformers already imported
    assert f"pid={facts['pid']} start=warm" in facts["log"]  # as its log's header says
    assert Path(facts["cwd"]) == tmp_path and facts["argv"] == ["job.py", "report", "--flag"]
    assert Path(facts["path0"]) == tmp_path  # the script's folder first on the import path, as for `python job.py`
    assert facts["mark"] == "mine" and facts["stdin"] == "hello" and "to stderr" in err


def test_a_job_with_other_project_settings_runs_in_the_same_server_and_reads_its_own(warm_server, tmp_path):
    """The project's own variables (GOLD_*) are read by its modules, which each fork imports anew: a run
    with GOLD_TEXTGEN_REPLACE set (`gold-textgen run --replace`) needs no server of its own."""
    facts = []
    for folder, changes in (("plain", {}), ("replace", {"GOLD_TEXTGEN_REPLACE": "smoke"})):
        (tmp_path / folder).mkdir()
        job = start_job(warm_server, tmp_path / folder, "report", **changes)
        out, _ = job.communicate("hello", timeout=60)
        facts.append(json.loads(out))
    assert all(fact["warm"] for fact in facts) and facts[0]["parent"] == facts[1]["parent"]
    assert [fact["replace"] for fact in facts] == [None, "smoke"]


def test_the_servers_address_changes_with_a_librarys_setting_not_with_the_projects(monkeypatch):
    from gold_textgen.runtime.warm_start import server_address

    plain = server_address()
    monkeypatch.setenv("GOLD_TEXTGEN_REPLACE", "smoke")
    assert server_address() == plain
    monkeypatch.setenv("OMP_NUM_THREADS", "7")  # read by OpenMP as torch loads it
    assert server_address() != plain


def test_a_signal_to_the_jobs_process_reaches_the_fork_and_the_fork_dies_the_same_way(warm_server, tmp_path):
    for number in (signal.SIGTERM, signal.SIGINT):
        job = start_job(warm_server, tmp_path, "wait")
        facts = json.loads(job.stdout.readline())
        assert facts["warm"]
        job.send_signal(number)
        assert job.wait(timeout=30) == -number
        assert wait_gone(facts["pid"]), f"the fork outlived its job's process after {number!r}"


def test_a_killed_jobs_process_takes_its_fork_with_it(warm_server, tmp_path):
    job = start_job(warm_server, tmp_path, "wait")
    facts = json.loads(job.stdout.readline())
    job.kill()  # SIGKILL: nothing to pass on
    job.wait(timeout=30)
    assert wait_gone(facts["pid"]), "the fork outlived its killed job process"


def test_a_failing_job_exits_non_zero_with_its_traceback(warm_server, tmp_path):
    job = start_job(warm_server, tmp_path, "fail")
    _, err = job.communicate(timeout=60)
    assert job.returncode == 1 and "ValueError: the job failed" in err


@pytest.mark.parametrize("setting", [{"GOLD_WARM_START": "0"}, {"SLURM_JOB_ID": "12"}], ids=["switched off", "under SLURM"])
def test_switched_off_or_under_slurm_a_job_runs_in_place(warm_server, tmp_path, setting):
    sockets = set(warm_server.rglob("*.sock"))
    job = start_job(warm_server, tmp_path, "report", **setting)
    out, _ = job.communicate("hello", timeout=120)
    facts = json.loads(out)
    assert job.returncode == 3 and facts["pid"] == job.pid and not facts["warm"] and "start=cold" in facts["log"]
    assert set(warm_server.rglob("*.sock")) == sockets  # and started no server for its environment


def test_a_job_whose_server_dies_before_it_is_up_runs_in_place(server_folder, tmp_path):
    """A server that cannot start (here every Python of the job's environment with `warm_start` on its command
    line exits at once) leaves the job that waits for it to run in place, without waiting out any timeout."""
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\nif 'gold_textgen.runtime.warm_start' in open('/proc/self/cmdline').read():\n    sys.exit(1)\n"
    )
    started = time.monotonic()
    job = start_job(server_folder, tmp_path, "report", PYTHONPATH=str(tmp_path))
    out, _ = job.communicate("hello", timeout=120)
    facts = json.loads(out)
    assert job.returncode == 3 and facts["pid"] == job.pid and not facts["warm"] and "start=cold" in facts["log"]
    assert time.monotonic() - started < 45, "the job waited for a server that had died"
