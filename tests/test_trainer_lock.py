"""The trainer lock where flock is unsupported (NFS without a lock daemon: ENOLCK) or per node (Lustre's
localflock, BeeGFS): a lock file that works across nodes, and clear words when it cannot."""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys
import time

import pytest

from gold_textgen.checkpoints import trainer_lock
from gold_textgen.checkpoints.trainer_lock import HELD_FILE, CheckpointsInUse, lock_checkpoints, mount_of, node_local_flock


@pytest.fixture(autouse=True)
def fresh_locks(monkeypatch):
    """Each test's locks, forgotten afterwards (a real process holds its locks until it ends)."""
    monkeypatch.setattr(trainer_lock, "_HELD", {})
    monkeypatch.setattr(trainer_lock.atexit, "register", lambda *args: None)


def no_flock(monkeypatch, code=errno.ENOLCK):
    def refuse(handle, operation):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(trainer_lock.fcntl, "flock", refuse)


def test_enolck_falls_back_to_a_lock_file_naming_the_holder(tmp_path, monkeypatch, caplog):
    no_flock(monkeypatch)
    lock_checkpoints(tmp_path / "ckpt")
    held = (tmp_path / "ckpt" / HELD_FILE).read_text()
    assert held.startswith(f"process {os.getpid()} on host {socket.gethostname()}")
    assert "flock fails" in caplog.text and "using a lock file" in caplog.text


def test_a_lock_file_held_on_another_node_stops_a_second_trainer(tmp_path, monkeypatch):
    no_flock(monkeypatch)
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / HELD_FILE).write_text("process 4242 on host node17, since 2026-11-28 09:00:00\n")  # refreshed just now
    with pytest.raises(CheckpointsInUse, match="in use by process 4242 on host node17"):
        lock_checkpoints(folder)


def test_a_lock_file_left_by_a_dead_holder_is_taken_over(tmp_path, monkeypatch):
    no_flock(monkeypatch)
    folder = tmp_path / "ckpt"
    folder.mkdir()
    stale = folder / HELD_FILE
    stale.write_text("process 4242 on host node17, since 2026-11-28 09:00:00\n")
    old = time.time() - trainer_lock.STALE_AFTER - 60
    os.utime(stale, (old, old))  # no heartbeat for longer than STALE_AFTER: the node died
    lock_checkpoints(folder)
    assert stale.read_text().startswith(f"process {os.getpid()}")
    dead_here = tmp_path / "other"
    dead_here.mkdir()
    (dead_here / HELD_FILE).write_text(f"process {2**22 + 7} on host {socket.gethostname()}, since now\n")  # no such pid
    lock_checkpoints(dead_here)


def test_forcing_flock_where_it_is_unsupported_says_how_to_fix_it(tmp_path, monkeypatch):
    no_flock(monkeypatch, errno.ENOSYS)
    monkeypatch.setenv("GOLD_TRAINER_LOCK", "flock")
    with pytest.raises(OSError, match=r"flock on .*trainer\.lock is not supported here .*lock daemon.*GOLD_TRAINER_LOCK=file"):
        lock_checkpoints(tmp_path / "ckpt")


def test_node_local_flock_filesystems_use_the_lock_file(tmp_path, monkeypatch):
    mounts = tmp_path / "mounts"
    mounts.write_text(f"/dev/sda1 / ext4 rw 0 0\nmds@o2ib:/scratch {tmp_path} lustre rw,localflock 0 0\n")
    assert mount_of(tmp_path / "ckpt", str(mounts)) == ("lustre", "rw,localflock")
    assert "localflock" in node_local_flock(("lustre", "rw,localflock"))
    assert node_local_flock(("lustre", "rw,flock")) is None and node_local_flock(("ext4", "rw")) is None
    assert "BeeGFS" in node_local_flock(("beegfs", "rw"))
    monkeypatch.setattr(trainer_lock, "mount_of", lambda path: ("lustre", "rw,localflock"))
    lock_checkpoints(tmp_path / "ckpt")
    assert (tmp_path / "ckpt" / HELD_FILE).exists() and not (tmp_path / "ckpt" / "trainer.lock").exists()


@pytest.mark.slow
def test_of_processes_that_find_one_stale_lock_at_once_exactly_one_takes_it_over(tmp_path):
    """Six trainers start together on a folder whose lock file a dead node left. Each finds it stale;
    the check is slowed down so that all of them do before any removes it (the window a real race has).
    Removing it is guarded, and checked again under the guard: one trainer takes the lock, the others are
    told it is in use, never two holders."""
    folder = tmp_path / "ckpt"
    folder.mkdir()
    stale = folder / HELD_FILE
    stale.write_text("process 4242 on host node17, since 2026-11-28 09:00:00\n")
    old = time.time() - trainer_lock.STALE_AFTER - 60
    os.utime(stale, (old, old))
    child = (
        "import sys, time\n"
        "from gold_textgen.checkpoints import trainer_lock\n"
        "check = trainer_lock._holder_gone\n"
        "def slow(path, now):\n"
        "    gone = check(path, now)\n"
        "    time.sleep(0.5)\n"
        "    return gone\n"
        "trainer_lock._holder_gone = slow\n"
        "try:\n"
        "    trainer_lock.lock_checkpoints(sys.argv[1])\n"
        "except trainer_lock.CheckpointsInUse:\n"
        "    print('in use', flush=True)\n"
        "else:\n"
        "    print('held', flush=True)\n"
        "    time.sleep(4)\n"
    )
    environment = {**os.environ, "GOLD_TRAINER_LOCK": "file"}
    trainers = [
        subprocess.Popen([sys.executable, "-c", child, str(folder)], stdout=subprocess.PIPE, text=True, env=environment) for _ in range(6)
    ]
    outcomes = sorted(trainer.communicate(timeout=120)[0].strip() for trainer in trainers)
    assert outcomes == ["held"] + ["in use"] * 5, outcomes
