"""Snakemake in the test's own process, for what starts no job (a dry run, a report, an unlock): Snakemake's
command-line entry point with the arguments a `snakemake` process would get, its output captured, the
process's state put back afterwards.

Why: a dry run of the smoke experiment takes about 0.3 s of CPU once Snakemake and the package are imported,
and a fresh `snakemake` process about 1.8 s, nearly all of it Python's start and the imports (Snakemake's
plugin registry imports pandas through the SLURM plugin). The suite makes some sixty dry runs on two cores.
A run that starts jobs, or imports another copy of the package, still gets a process of its own."""

from __future__ import annotations

import contextlib
import faulthandler
import io
import os
import subprocess
import sys
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
    process would have: the exit status and the text on stdout and stderr. The working folder, environment,
    argv and warning filters are restored. A run that hangs for `timeout` seconds ends this process with
    every thread's traceback (there is no child to kill). Only from the main thread: the process's folder,
    environment and streams are one."""
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("Snakemake in this process changes its folder and environment: call it from the main thread only")
    saved = dict(os.environ), os.getcwd(), sys.argv
    stdout, stderr = io.StringIO(), io.StringIO()
    faulthandler.dump_traceback_later(timeout, exit=True, file=2)  # fd 2: pytest replaces sys.stderr
    try:
        os.environ.clear()
        os.environ.update(environment)
        sys.argv = list(command)
        os.chdir(cwd or saved[1])
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), warnings.catch_warnings():
            warnings.resetwarnings()
            for action, category, module in reversed(FRESH_PROCESS_WARNINGS):
                warnings.filterwarnings(action, category=category, module=module or "")
            status = exit_status(command[1:])
    finally:
        faulthandler.cancel_dump_traceback_later()
        os.environ.clear()
        os.environ.update(saved[0])
        os.chdir(saved[1])
        sys.argv = saved[2]
    return subprocess.CompletedProcess(command, status, stdout.getvalue(), stderr.getvalue())


def exit_status(arguments: list[str]) -> int:
    """The status `snakemake.cli.main(arguments)` exits with (it always ends in sys.exit)."""
    import snakemake.cli  # here: the unit tests that make no dry run do not pay for Snakemake's imports

    try:
        snakemake.cli.main(arguments)
    except SystemExit as exit:
        return exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
    return 0
