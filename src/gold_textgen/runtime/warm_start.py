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
behind would outlive it). This module imports nothing heavy: a step calls `hand_over()` before its imports.
"""

from __future__ import annotations

import array
import atexit
import contextlib
import hashlib
import json
import os
import runpy
import select
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import traceback
from pathlib import Path

SWITCH = "GOLD_WARM_START"
OWN = "GOLD_"  # the project's settings (SWITCH, GOLD_TEXTGEN_REPLACE, ...): no preloaded library reads them
# What the workflow's steps import and take seconds to (a model step about 5 s, a table or figure about 1 s
# on the reference machine): the server imports them once. Every step's Snakemake preamble imports the first.
PRELOADED = (
    "snakemake.script",
    "transformers.modeling_utils",  # torch with it
    "transformers.trainer",
    "datasets",
    "sacrebleu",
    "pandas",
    "matplotlib.pyplot",
    "scipy.stats",
)
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
            [sys.executable, "-m", __name__, str(address)],
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


def send_message(connection: socket.socket, message: dict, fds: list[int] = ()) -> None:
    payload = json.dumps(message).encode() + b"\n"
    if fds:
        connection.sendmsg([payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        connection.sendall(payload)


def receive_message(connection: socket.socket) -> tuple[dict | None, list[int]]:
    """One newline-ended JSON message (None when the peer closed first) and the file descriptors sent with it."""
    data, fds, size = b"", [], array.array("i").itemsize
    while not data.endswith(b"\n"):
        try:
            chunk, ancillary, _flags, _address = connection.recvmsg(65536, socket.CMSG_SPACE(3 * size))
        except OSError:
            return None, fds
        for level, kind, item in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.extend(array.array("i", item[: len(item) - len(item) % size]))
        if not chunk:
            return None, fds
        data += chunk
    return json.loads(data), fds


def serve(address: Path) -> None:
    """Import the libraries, then fork one process per job handed over until idle for IDLE_SECONDS."""
    import gc
    import importlib

    for name in PRELOADED:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    os.chdir("/")  # holds no job's folder
    gc.collect()
    gc.freeze()  # the forks share these pages instead of copying them at the first collection
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    staging = address.with_name(f".{address.name}.{os.getpid()}")
    listener.bind(str(staging))
    listener.listen(16)
    os.replace(staging, address)  # jobs connect only once the imports are done
    address.with_suffix(".starting").unlink(missing_ok=True)
    mine = os.stat(address).st_ino
    running: dict[int, socket.socket] = {}
    last_active = time.monotonic()
    try:
        while running or time.monotonic() - last_active < IDLE_SECONDS:
            if select.select([listener], [], [], 0.2)[0]:
                connection, _ = listener.accept()
                child = _fork_job(listener, connection, list(running.values()))
                if child is not None:
                    running[child] = connection
            for pid in list(running):
                finished, status = os.waitpid(pid, os.WNOHANG)
                if finished:
                    outcome = {"signal": os.WTERMSIG(status)} if os.WIFSIGNALED(status) else {"exit": os.waitstatus_to_exitcode(status)}
                    with contextlib.suppress(OSError), running.pop(pid) as connection:
                        send_message(connection, outcome)
            if running:
                last_active = time.monotonic()
            if not _still_at(address, mine):  # another server took the address: finish the jobs, then go
                last_active = -IDLE_SECONDS
    finally:
        if _still_at(address, mine):
            address.unlink(missing_ok=True)
        log = address.with_suffix(".log")
        with contextlib.suppress(OSError):
            if not log.stat().st_size:  # nothing went wrong: no file left behind
                log.unlink()


def _still_at(address: Path, inode: int) -> bool:
    try:
        return os.stat(address).st_ino == inode
    except FileNotFoundError:
        return False


def _fork_job(listener: socket.socket, connection: socket.socket, others: list[socket.socket]) -> int | None:
    """Fork the job `connection` hands over; the server's side returns the fork's pid (None for a bad request)."""
    request, fds = receive_message(connection)
    if request is None or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        connection.close()
        return None
    pid = os.fork()
    if pid:
        for fd in fds:
            os.close(fd)
        with contextlib.suppress(OSError):
            send_message(connection, {"pid": pid})
        return pid
    for inherited in (listener, *others):  # the other jobs' connections are the server's to answer
        inherited.close()
    _run_job(connection, request, fds)  # never returns


def _run_job(connection: socket.socket, request: dict, fds: list[int]) -> None:
    global _in_fork
    _in_fork = True
    code = 1
    try:
        os.setpgid(0, 0)  # with what it starts (torchrun's workers), killed together when the job's process dies
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        for number in FORWARDED_SIGNALS:  # as the job's process has them: a job started ignoring SIGINT still does
            default = signal.default_int_handler if number == signal.SIGINT else signal.SIG_DFL
            signal.signal(number, signal.SIG_IGN if number in request["ignored"] else default)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = request["argv"]
        sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))  # as `python script.py` sets it (the server's is its own)
        sys.stdin, sys.stdout, sys.stderr = (os.fdopen(fd, mode, closefd=False) for fd, mode in ((0, "r"), (1, "w"), (2, "w")))
        threading.Thread(target=_die_with, args=(connection,), daemon=True).start()
        try:
            runpy.run_path(sys.argv[0], run_name="__main__")
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            if stop.code is not None and not isinstance(stop.code, int):
                print(stop.code, file=sys.stderr)
        except KeyboardInterrupt:
            traceback.print_exc()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGINT)
        except BaseException:
            traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            atexit._run_exitfuncs()  # what the interpreter's exit would run, without its last collection
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)  # not through the server's own frames below


def _die_with(connection: socket.socket) -> None:
    """The job's own process is gone (killed with SIGKILL, which it cannot pass on): so is the job."""
    with contextlib.suppress(OSError):
        while connection.recv(1):
            pass
    os.killpg(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    # Through the package's copy of this module, not __main__: the jobs' scripts import that copy, and its
    # `_in_fork` is what tells them they already run in a fork.
    from gold_textgen.runtime.warm_start import serve as serve_from_package

    serve_from_package(Path(sys.argv[1]))
