"""The warm-start server (runtime/warm_start.py starts it, `python -m gold_textgen.runtime.warm_start_server
ADDRESS`): it imports the heavy libraries once, then forks one process per step handed over, which runs the
step's script with the step's streams, folder, environment and arguments, until idle for IDLE_SECONDS. The
fork marks itself (`mark_in_fork`, in the package's copy of warm_start that the steps' scripts import), so
that the script's own `hand_over()` lets it run.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import runpy
import select
import signal
import socket
import sys
import threading
import time
import traceback
from pathlib import Path

from .warm_messages import receive_message, send_message
from .warm_start import FORWARDED_SIGNALS, IDLE_SECONDS, mark_in_fork

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
    mark_in_fork()
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
    serve(Path(sys.argv[1]))
