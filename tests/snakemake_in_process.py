"""Snakemake in the test's own process: Snakemake's command-line entry point with the arguments a `snakemake`
process would get, its output captured (what it prints, and what the jobs it starts write to the standard
streams they inherit), the process's state put back afterwards.

Why: a dry run of the smoke experiment takes about 0.3 s of CPU once Snakemake and the package are imported,
and a fresh `snakemake` process about 2-3 s, nearly all of it Python's start and the imports (Snakemake's
plugin registry imports pandas through the SLURM plugin). The suite starts some eighty drivers on two cores.
A driver that a test stops with a signal, that submits to SLURM, or that imports another copy of the
package still gets a process of its own."""

from __future__ import annotations

import contextlib
import faulthandler
import io
import os
import signal
import subprocess
import sys
import tempfile
import threading
import warnings
from pathlib import Path

# What a fresh interpreter starts with (Python's documented default filters): a warning that the Snakefile's
# code gives is printed once per run, as a new `snakemake` process would, not held by pytest's recorder
# or the once-per-place registry of an earlier run in this process.
FRESH_PROCESS_WARNINGS = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, None),
    ("ignore", PendingDeprecationWarning, None),
    ("ignore", ImportWarning, None),
    ("ignore", ResourceWarning, None),
)


def snakemake_in_process(
    command: list[str], environment: dict[str, str], timeout: int, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    """Run `command` (`snakemake` and its arguments) as `snakemake.cli.main` would in a process of its own,
    with `environment` as os.environ, in `cwd` (else in this process's folder), and return what that
    process would have: the exit status and the text on stdout and stderr (Snakemake's own, then its jobs').
    The working folder, environment, argv, signal handlers, warning filters and standard streams are
    restored. A run that hangs for `timeout` seconds ends this process with every thread's traceback (there
    is no child to kill). Only from the main thread: the process's folder, environment and streams are one."""
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("Snakemake in this process changes its folder and environment: call it from the main thread only")
    # The jobs write to the file descriptors they inherit: two files here, as a process's pipes would take it.
    with tempfile.TemporaryFile() as jobs_out, tempfile.TemporaryFile() as jobs_err:
        status, stdout, stderr = _run(command, environment, timeout, cwd, (jobs_out, jobs_err))
        for file in (jobs_out, jobs_err):
            file.seek(0)
        jobs = [file.read().decode(errors="replace") for file in (jobs_out, jobs_err)]
    return subprocess.CompletedProcess(command, status, stdout + jobs[0], stderr + jobs[1])


def _run(command: list[str], environment: dict[str, str], timeout: int, cwd: Path | None, inherited: tuple) -> tuple[int, str, str]:
    """Snakemake's exit status and what it printed, its jobs' standard streams pointed at `inherited`."""
    saved = dict(os.environ), os.getcwd(), sys.argv
    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    stdout, stderr = io.StringIO(), io.StringIO()
    sys.stdout.flush()
    sys.stderr.flush()
    streams = [os.dup(1), os.dup(2)]
    faulthandler.dump_traceback_later(timeout, exit=True, file=streams[1])  # the real stderr, not the jobs' file
    try:
        os.environ.clear()
        os.environ.update(environment)
        sys.argv = list(command)
        os.chdir(cwd or saved[1])
        for number, file in enumerate(inherited, start=1):
            os.dup2(file.fileno(), number)
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), warnings.catch_warnings():
            warnings.resetwarnings()
            for action, category, module in reversed(FRESH_PROCESS_WARNINGS):
                warnings.filterwarnings(action, category=category, module=module or "")
            status = exit_status(command[1:])
    finally:
        faulthandler.cancel_dump_traceback_later()
        for number, stream in enumerate(streams, start=1):
            os.dup2(stream, number)
            os.close(stream)
        for number, handler in handlers.items():
            signal.signal(number, handler)
        os.environ.clear()
        os.environ.update(saved[0])
        os.chdir(saved[1])
        sys.argv = saved[2]
    return status, stdout.getvalue(), stderr.getvalue()


def exit_status(arguments: list[str]) -> int:
    """The status `snakemake.cli.main(arguments)` exits with (it always ends in sys.exit)."""
    import snakemake.cli  # here: the unit tests that make no dry run do not pay for Snakemake's imports

    try:
        snakemake.cli.main(arguments)
    except SystemExit as exit:
        return exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
    return 0
