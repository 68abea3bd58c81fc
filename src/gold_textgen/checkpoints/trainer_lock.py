"""One trainer per checkpoint folder, on local disks and on cluster filesystems.

The main training process holds the folder's lock for its whole life; a second trainer on the same folder
(the rerun of a workflow whose killed driver left its job running) stops with a message naming the holder.

Two kinds of lock, chosen by `GOLD_TRAINER_LOCK` (`auto`, the default; `flock`; `file`):

* `flock` on `trainer.lock`: the kernel drops it when the holder dies, however it dies. It does not work
  everywhere a cluster keeps its results: NFS without a lock daemon answers ENOLCK, Lustre mounted
  without `flock` answers ENOSYS, and Lustre's `localflock` or BeeGFS's default grant it per node, so two
  trainers on two nodes would both hold it.
* A lock file, `trainer.lock.held`, created with O_EXCL (atomic on NFS, Lustre and BeeGFS alike) and
  naming its holder, whose time the holder refreshes every HEARTBEAT seconds. A holder on this host that
  no longer runs, or one on any host whose file has not been refreshed for STALE_AFTER seconds (it died
  without removing it: SIGKILL, a lost node), no longer holds it.

`auto` uses flock, and the lock file where flock fails or where the folder's filesystem grants it per node
(read from /proc/mounts), saying so in the job's log."""

from __future__ import annotations

import atexit
import contextlib
import errno
import fcntl
import logging
import os
import socket
import threading
import time
from pathlib import Path
from typing import IO

log = logging.getLogger(__name__)
LOCK_FILE = "trainer.lock"
HELD_FILE = "trainer.lock.held"
MODE_VARIABLE = "GOLD_TRAINER_LOCK"
HEARTBEAT = 60.0
STALE_AFTER = 600.0
FLOCK_UNSUPPORTED = (errno.ENOLCK, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL)
_HELD: dict[Path, object] = {}  # checkpoint folder -> its open flock file or its heartbeat, for the process's life


class CheckpointsInUse(RuntimeError):
    """Another living process trains into the same checkpoint folder."""


def holder_text() -> str:
    return f"process {os.getpid()} on host {socket.gethostname()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}"


def in_use(checkpoint_dir: Path, holder: str) -> CheckpointsInUse:
    return CheckpointsInUse(
        f"{checkpoint_dir} is in use by {holder}: a training job of an earlier run is still writing these checkpoints "
        "(a driver killed with SIGKILL leaves its jobs running). Stop that process, or let it finish, then rerun; "
        "a second trainer here would resume from checkpoints the first is still writing."
    )


def mount_of(path: Path, mounts_file: str = "/proc/mounts") -> tuple[str, str] | None:
    """(filesystem type, mount options) of the mount that holds `path`, or None where /proc/mounts is absent."""
    try:
        lines = Path(mounts_file).read_text().splitlines()
    except OSError:
        return None
    resolved, best = str(path.resolve()), None
    for line in lines:
        fields = line.split()
        if len(fields) < 4:
            continue
        point = fields[1].replace("\\040", " ")
        if (resolved == point or resolved.startswith(point.rstrip("/") + "/")) and (best is None or len(point) > len(best[0])):
            best = (point, fields[2], fields[3])
    return None if best is None else (best[1], best[2])


def node_local_flock(mount: tuple[str, str] | None) -> str | None:
    """Why flock on this mount holds within one node only (None: it is cluster-wide or the disk is local)."""
    if mount is None:
        return None
    kind, options = mount
    if kind == "lustre" and "localflock" in options.split(","):
        return "Lustre mounted with localflock grants flock per node"
    if kind == "beegfs":
        return "BeeGFS grants flock per node unless tuneUseGlobalFileLocks is set"
    return None


def lock_checkpoints(checkpoint_dir: str | Path) -> None:
    """Hold `checkpoint_dir`'s trainer lock for the rest of this process's life (again: nothing to do), or
    raise CheckpointsInUse naming the living process that holds it."""
    checkpoint_dir = Path(checkpoint_dir)
    key = checkpoint_dir.resolve()
    if key in _HELD:
        return
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    mode = os.environ.get(MODE_VARIABLE, "auto")
    if mode not in ("auto", "flock", "file"):
        raise ValueError(f"{MODE_VARIABLE}={mode}: use auto, flock or file")
    reason = node_local_flock(mount_of(checkpoint_dir)) if mode == "auto" else None
    if mode == "file" or reason:
        if reason:
            log.info("trainer lock: a lock file, since %s (%s)", reason, checkpoint_dir)
        _HELD[key] = _hold_lock_file(checkpoint_dir)
        return
    try:
        _HELD[key] = _hold_flock(checkpoint_dir)
    except OSError as error:
        if error.errno not in FLOCK_UNSUPPORTED:
            raise
        if mode == "flock":
            raise OSError(
                error.errno,
                f"flock on {checkpoint_dir / LOCK_FILE} is not supported here ({error.strerror}): on NFS start the lock "
                f"daemon (rpc.statd / lockd) or mount with `local_lock=none`; or set {MODE_VARIABLE}=file (or auto) to use a lock file",
            ) from error
        log.warning("trainer lock: flock fails on %s (%s); using a lock file instead", checkpoint_dir, error.strerror)
        _HELD[key] = _hold_lock_file(checkpoint_dir)


def _hold_flock(checkpoint_dir: Path) -> IO:
    handle = open(checkpoint_dir / LOCK_FILE, "a+", encoding="utf-8")  # noqa: SIM115 (held open on purpose)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise in_use(checkpoint_dir, holder) from None
    except OSError:
        handle.close()
        raise
    handle.seek(0)
    handle.truncate()
    handle.write(holder_text() + "\n")
    handle.flush()
    return handle


def _holder_gone(path: Path, now: float) -> bool:
    """Whether the holder named in the lock file `path` no longer holds it: a process of this host that
    does not run, or a file not refreshed for STALE_AFTER seconds."""
    try:
        text, age = path.read_text(), now - path.stat().st_mtime
    except FileNotFoundError:
        return True
    fields = text.split()
    if len(fields) >= 5 and fields[0] == "process" and fields[4].rstrip(",") == socket.gethostname():
        try:
            os.kill(int(fields[1]), 0)
        except ProcessLookupError:
            return True
        except (PermissionError, ValueError):
            pass
    return age > STALE_AFTER


def _hold_lock_file(checkpoint_dir: Path) -> threading.Event:
    path = checkpoint_dir / HELD_FILE
    for _ in range(3):  # a stale file is removed once, then taken (or found taken over by another process)
        try:
            descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            if not _holder_gone(path, time.time()):
                raise in_use(checkpoint_dir, path.read_text().strip() or "another process") from None
            _remove_if_stale(path)  # then try again: the file is gone, or another process took it over first
            continue
        with os.fdopen(descriptor, "w") as handle:
            handle.write(holder_text() + "\n")
        stop = threading.Event()
        threading.Thread(target=_heartbeat, args=(path, stop), daemon=True, name="trainer-lock-heartbeat").start()
        atexit.register(_release, path, stop)
        return stop
    raise in_use(checkpoint_dir, "another process")


def _remove_if_stale(path: Path) -> None:
    """Remove the lock file `path` if its holder is gone, as one process at a time: a take-over file only
    one process can create guards the check and the removal. Without it two processes that both found the
    file stale could each remove it, the second removing the lock the first had just taken, and both
    would train in one folder."""
    guard = path.with_name(path.name + ".takeover")
    try:
        descriptor = os.open(guard, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        try:  # left by a process that died while taking over
            if time.time() - guard.stat().st_mtime > STALE_AFTER:
                guard.unlink(missing_ok=True)
        except FileNotFoundError:
            pass
        return
    try:
        if _holder_gone(path, time.time()):  # again, under the guard: it may have been taken over meanwhile
            with contextlib.suppress(FileNotFoundError):
                log.warning("trainer lock: removing %s, whose holder is gone (%s)", path, path.read_text().strip())
            path.unlink(missing_ok=True)
    finally:
        os.close(descriptor)
        guard.unlink(missing_ok=True)


def _heartbeat(path: Path, stop: threading.Event) -> None:
    while not stop.wait(HEARTBEAT):
        try:
            os.utime(path)
        except FileNotFoundError:
            return


def _release(path: Path, stop: threading.Event) -> None:
    stop.set()
    path.unlink(missing_ok=True)
