"""Warm starts for the steps of a local run: the heavy libraries imported once, each step forked from them.

A step that runs a model spends about 5 s of CPU importing torch and transformers before it does anything,
and a table or figure about 1 s importing pandas, matplotlib and SciPy (docs/benchmarks.md): most of a small
step's time. The first step of a local run starts a server in the background that imports them once, and
every step hands itself over to it: the server forks, and the fork runs the step's script with the step's
standard streams, folder, environment and arguments, while the process Snakemake started waits for it,
passes on the signals it receives and exits as the fork exits (killed, the fork dies with it). A step that
finds the server still starting waits for it rather than import the same libraries beside it (two model
steps ready at once would otherwise make three imports on the cores, the server's and their own); it runs
in place if the server dies before it is up. The project's own modules are imported by each step as before,
so an edit to them counts from the next step on; a server serves one Python, one set of installed packages
and one environment (the project's own GOLD_* settings aside), and leaves after a minute without steps.

Off with GOLD_WARM_START=0; never under SLURM, where each job has an allocation of its own (a server left
behind would outlive it). This module is the step's side and imports nothing heavy: a step calls
`hand_over()` before its imports; the server is runtime/warm_start_server.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from .warm_messages import receive_message, send_message

SWITCH = "GOLD_WARM_START"
OWN = "GOLD_"  # the project's settings (SWITCH, GOLD_TEXTGEN_REPLACE, ...): no preloaded library reads them
IDLE_SECONDS = 60.0
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
_in_fork = False  # set in a job forked by the server: its script calls hand_over() again and must run


def hand_over() -> None:
    """Run the calling job's script in a fork of the warm server (started if none is up or starting) and exit
    as it exits; return (the script runs here) when warm starts are off, inside such a fork, or no server comes up."""
    if _in_fork or not enabled():
        return
    address = server_address()
    if address is None:
        return
    connection = _connect(address)
    if connection is None:
        start_server(address)
        connection = _wait_for_server(address)
        if connection is None:
            return
    with connection:
        ignored = [int(number) for number in FORWARDED_SIGNALS if signal.getsignal(number) == signal.SIG_IGN]
        request = {"argv": sys.argv, "cwd": os.getcwd(), "env": dict(os.environ), "ignored": ignored}
        send_message(connection, request, fds=[0, 1, 2])
        reply, _ = receive_message(connection)
        if reply is None:  # the server went away before forking: run here
            return
        _wait_for_fork(connection, reply["pid"], ignored)


def _connect(address: Path) -> socket.socket | None:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(str(address))
        return connection
    except OSError:
        connection.close()
        return None


def _wait_for_server(address: Path) -> socket.socket | None:
    """A connection to the server being started for `address`, once it is up; None as soon as no server
    process is starting (it died before it was up) or after 2 x IDLE_SECONDS (a server that hangs)."""
    starting = address.with_suffix(".starting")
    deadline = time.monotonic() + 2 * IDLE_SECONDS
    while time.monotonic() < deadline:
        connection = _connect(address)
        if connection is not None:
            return connection
        if not _server_starting(starting):
            return _connect(address)  # up just now (it removes the marker once its socket is there), or dead
        time.sleep(0.1)
    return None


def _server_starting(starting: Path) -> bool:
    """Whether the server named in the `.starting` marker lives: neither gone nor a zombie (dead before the
    job that started it reaped it); a marker just made names no one yet (that server is starting Python)."""
    try:
        text, made = starting.read_text().strip(), starting.stat().st_mtime
        if not text.isdigit():
            return time.time() - made < 30
        os.kill(int(text), 0)  # without /proc (macOS) that it exists is all we know
        return not Path("/proc/self").exists() or "(zombie)" not in Path(f"/proc/{text}/status").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):  # gone (a number another user's process took)
        return False


def started_warm() -> bool:
    """Whether this process is a step forked from the server."""
    return _in_fork


def mark_in_fork() -> None:
    """This process is a step the server forked (runtime/warm_start_server.py): its script's own
    `hand_over()` must let it run."""
    global _in_fork
    _in_fork = True


def _wait_for_fork(connection: socket.socket, pid: int, ignored: list[int]) -> None:
    for number in FORWARDED_SIGNALS:
        if number not in ignored:
            signal.signal(number, lambda received, _frame: _forward(pid, received))
    # No outcome: the server went away (the fork holds the connection until it ends, so it has ended): killed.
    outcome = receive_message(connection)[0] or {"signal": int(signal.SIGKILL)}
    if "signal" in outcome:  # die the way the job died, for the driver to see
        for number in FORWARDED_SIGNALS:
            signal.signal(number, signal.SIG_DFL)
        sys.stdout.flush()
        os.kill(os.getpid(), outcome["signal"])
    sys.stdout.flush()
    os._exit(outcome["exit"])


def _forward(pid: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, number)


def enabled() -> bool:
    return os.environ.get(SWITCH, "1") != "0" and "SLURM_JOB_ID" not in os.environ and hasattr(socket, "AF_UNIX")


def server_address() -> Path | None:
    """The server's socket for this Python, these installed packages and this environment, in a folder of
    this user's only (None where the path would be too long for a Unix socket or the folder is not private)."""
    packages = Path(sysconfig.get_paths()["purelib"])
    # A fork takes the job's folder and environment; the server's counts where a library reads it as it imports.
    environment = sorted((key, value) for key, value in os.environ.items() if key not in ("PWD", "OLDPWD") and not key.startswith(OWN))
    identity = json.dumps([sys.executable, packages.stat().st_mtime_ns, environment])
    folder = Path(tempfile.gettempdir()) / f"gold-textgen-warm-{os.getuid()}"
    address = folder / f"{hashlib.sha256(identity.encode()).hexdigest()[:20]}.sock"
    if len(str(address)) >= 100:
        return None
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        owner = folder.stat()
    except OSError:
        return None
    private = owner.st_uid == os.getuid() and not owner.st_mode & 0o077
    return address if private else None  # never a folder another user could have put a server in


def start_server(address: Path) -> None:
    """Start the server for `address` in a session of its own, unless another job is starting it."""
    starting = address.with_suffix(".starting")
    with contextlib.suppress(FileNotFoundError):
        if time.time() - starting.stat().st_mtime < 2 * IDLE_SECONDS:
            return  # another job is starting it
        starting.unlink()  # left by a server that failed to start: try again
    try:
        os.close(os.open(starting, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        return
    with open(address.with_suffix(".log"), "a") as log:  # the server's own errors, if any
        subprocess.Popen(
            [sys.executable, "-m", "gold_textgen.runtime.warm_start_server", str(address)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            preexec_fn=lambda: _name_in(starting),  # before Python starts: waiting jobs see it die, however early
        )


def _name_in(marker: Path) -> None:  # this process's id into `marker`, whole or not at all
    staged = marker.with_name(f".{marker.name}.{os.getpid()}")
    staged.write_text(str(os.getpid()))
    os.replace(staged, marker)
