"""Resumable training that never resumes the wrong run.

Trainer checkpoints live outside the rule's declared output (`results/checkpoints/...`), so a restarted
job (preemption, `--rerun-incomplete`, a retry) resumes from its last checkpoint. Three rules keep that
from ever handing back a stale or different model:

* **Identity.** The folder carries the run's identity (`fingerprint.json`): the training settings and
  the content digests of everything the run reads (data files, tokenizer, starting model, reward cache).
  A resume is allowed only when every part is identical; otherwise the folder is emptied and the run
  starts fresh, and the log says which part changed.
* **Completeness.** A checkpoint counts only once `checkpoint_complete.json` is in it, written by
  `CheckpointCompletion` after every other part (the Trainer's files, GOLD's lagged policy). A job killed
  while saving leaves an incomplete folder, which is removed; the run resumes from the last complete one.
* **No leftovers.** A finished run removes its checkpoints (`discard_checkpoints`), so a later job, even
  one forced with `snakemake -f`, trains afresh instead of resuming a run that is over. It keeps the
  identity, marked finished, so the next run's log says which setting or input changed since (Snakemake
  has already deleted the model it is about to replace).
* **One trainer at a time.** The main process holds an exclusive lock (`flock` on `trainer.lock`, which
  names the holder's process and host) for as long as it lives. A second trainer on the same folder, such
  as the rerun of a workflow whose killed driver left its job running, stops with a message naming that
  process instead of resuming from checkpoints the first still writes. The kernel drops the lock when the
  holder dies, however it dies, so a crashed job never blocks its restart.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import socket
import time
from pathlib import Path
from typing import IO

from transformers import TrainerCallback

from ..workflow.files import content_digest, read_json, write_json
from ..workflow.runtime import is_main_process

log = logging.getLogger(__name__)
FINGERPRINT_FILE = "fingerprint.json"
COMPLETE_FILE = "checkpoint_complete.json"
LOCK_FILE = "trainer.lock"
CHECKPOINT_NAME = re.compile(r"^checkpoint-(\d+)$")
_HELD_LOCKS: dict[Path, IO] = {}  # checkpoint folder -> its open lock file, kept for the process's life


class CheckpointsInUse(RuntimeError):
    """Another living process trains into the same checkpoint folder."""


def fingerprint(identity: dict) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()


def run_identity(settings: dict, inputs: dict[str, str | os.PathLike | None]) -> dict:
    """What a training run depends on: its settings and the content digest of each input (file or folder)."""
    return {"settings": settings, "inputs": {name: None if path is None else content_digest(path) for name, path in inputs.items()}}


def _flat(settings: object, prefix: str = "") -> dict[str, object]:
    if not isinstance(settings, dict) or not settings:
        return {prefix: settings}
    return {key: value for name, part in settings.items() for key, value in _flat(part, f"{prefix}{name}.").items()}


def changed_settings(old: dict, new: dict) -> list[str]:
    """`key: old -> new` for every setting (by its dotted path) that differs between two identities' settings."""
    before, after = _flat(old), _flat(new)
    missing = "(unset)"
    return [
        f"{key.rstrip('.')}: {before.get(key, missing)} -> {after.get(key, missing)}"
        for key in sorted(before.keys() | after.keys())
        if before.get(key, missing) != after.get(key, missing)
    ]


def _changed_parts(old: dict, new: dict) -> list[str]:
    settings = changed_settings(old.get("settings", {}), new["settings"])
    parts = [f"the training settings ({'; '.join(settings)})"] if settings else []
    old_inputs = old.get("inputs", {})
    parts += [f"input '{name}'" for name, digest in new["inputs"].items() if old_inputs.get(name) != digest]
    return parts or ["the recorded identity's format"]


def lock_checkpoints(checkpoint_dir: str | Path) -> None:
    """Hold `checkpoint_dir`'s trainer lock for the rest of this process's life (again: nothing to do), or
    raise CheckpointsInUse naming the living process that holds it."""
    checkpoint_dir = Path(checkpoint_dir)
    key = checkpoint_dir.resolve()
    if key in _HELD_LOCKS:
        return
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    handle = open(checkpoint_dir / LOCK_FILE, "a+", encoding="utf-8")  # noqa: SIM115 (held open on purpose)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise CheckpointsInUse(
            f"{checkpoint_dir} is in use by {holder}: a training job of an earlier run is still writing these checkpoints "
            "(a driver killed with SIGKILL leaves its jobs running). Stop that process, or let it finish, then rerun; "
            "a second trainer here would resume from checkpoints the first is still writing."
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"process {os.getpid()} on host {socket.gethostname()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
    handle.flush()
    _HELD_LOCKS[key] = handle


def _clear(checkpoint_dir: Path) -> None:
    """Remove everything in the folder but the lock (removing the lock's file would let a second trainer
    lock a new file of the same name)."""
    for entry in checkpoint_dir.iterdir():
        if entry.name == LOCK_FILE:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def claim_checkpoints(checkpoint_dir: str | Path, identity: dict) -> str | None:
    """Make `checkpoint_dir` this run's: lock it (CheckpointsInUse while another trainer lives there),
    then return the last complete checkpoint of an unfinished run with exactly this identity (None: start
    fresh), after removing checkpoints of another identity and incomplete ones and recording this identity
    in the folder. The log says why a run starts fresh, and which settings changed.

    Only the first process locks, removes and records; the others of a multi-process run only read."""
    checkpoint_dir = Path(checkpoint_dir)
    marker = checkpoint_dir / FINGERPRINT_FILE
    main = is_main_process()
    wanted = fingerprint(identity)
    if main:
        lock_checkpoints(checkpoint_dir)
    recorded = read_json(marker) if marker.exists() else None
    if recorded is not None and recorded.get("finished"):
        changes = _changed_parts(recorded.get("identity", {}), identity) if recorded.get("fingerprint") != wanted else []
        what = "changed since: " + ", ".join(changes) if changes else "with the same settings and inputs"
        log.info("training afresh: the last run in %s finished %s", checkpoint_dir, what)
    elif recorded is None and any(CHECKPOINT_NAME.match(entry.name) for entry in _entries(checkpoint_dir)):
        log.info("starting fresh: the checkpoints in %s belong to another run (it records no identity)", checkpoint_dir)
    elif recorded is not None and recorded.get("fingerprint") != wanted:
        reason = ", ".join(_changed_parts(recorded.get("identity", {}), identity))
        log.info("starting fresh: the checkpoints in %s belong to another run (changed: %s)", checkpoint_dir, reason)
    elif recorded is not None:
        return last_complete_checkpoint(checkpoint_dir, remove_incomplete=main)
    if main:
        _clear(checkpoint_dir)
        write_json(marker, {"fingerprint": wanted, "identity": identity})
    return None


def _entries(folder: Path) -> list[Path]:
    return list(folder.iterdir()) if folder.is_dir() else []


def last_complete_checkpoint(checkpoint_dir: Path, remove_incomplete: bool = True) -> str | None:
    """The highest-numbered checkpoint that is marked complete; incomplete ones are removed (a job killed
    while saving), since the Trainer would otherwise write into or rotate them."""
    found = (
        sorted(
            ((int(m.group(1)), path) for path in checkpoint_dir.iterdir() if (m := CHECKPOINT_NAME.match(path.name)) and path.is_dir()),
            reverse=True,
        )
        if checkpoint_dir.exists()
        else []
    )
    for _, path in found:
        if (path / COMPLETE_FILE).exists():
            return str(path)
        log.warning("ignoring incomplete checkpoint %s (the job ended while saving it)", path)
        if remove_incomplete:
            shutil.rmtree(path, ignore_errors=True)
    return None


class CheckpointCompletion(TrainerCallback):
    """Marks a checkpoint complete once everything in it is written. Register it last: callbacks run in
    order, so every other callback's part of the checkpoint (GOLD's lagged policy) is already there."""

    def on_save(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            write_json(Path(args.output_dir) / f"checkpoint-{state.global_step}" / COMPLETE_FILE, {"global_step": state.global_step})


def discard_checkpoints(checkpoint_dir: str | Path) -> None:
    """Remove a finished run's checkpoints: its model is written, and nothing may resume it. The identity
    stays, marked finished, for the next run's account of what changed."""
    if not is_main_process():
        return
    checkpoint_dir = Path(checkpoint_dir)
    if not checkpoint_dir.is_dir():
        return
    marker = checkpoint_dir / FINGERPRINT_FILE
    recorded = read_json(marker) if marker.exists() else None
    _clear(checkpoint_dir)
    if recorded is not None:
        write_json(marker, {**recorded, "finished": True})
