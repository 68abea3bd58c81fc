"""Resumable training that never resumes the wrong run.

Trainer checkpoints live outside the rule's declared output (`results/<experiment>/checkpoints/...`), so a restarted
job (preemption, `--rerun-incomplete`, a retry) resumes from its last checkpoint. Three rules keep that
from ever handing back a stale or different model:

* **Identity.** The folder carries the run's identity (`fingerprint.json`): the training settings and
  the content digests of everything the run reads (data files, tokenizer, starting model, reward cache).
  A resume is allowed only when every part is identical; otherwise the folder is emptied and the run
  starts fresh, and the log says which part changed.
* **Completeness.** A checkpoint counts only once `checkpoint_complete.json` is in it, written by
  `CheckpointCompletion` after every other part (the Trainer's files, GOLD's lagged policy), with each
  file's size and sha256. A job killed while saving leaves an incomplete folder, and a file truncated,
  edited or removed since (a disk that filled, a weight changed by hand) leaves a damaged one: either is
  named in the log and removed, and the run resumes from the newest intact checkpoint (or starts afresh,
  saying so), never from a checkpoint whose files are not the ones the Trainer wrote.
* **No leftovers.** A finished run removes its checkpoints (`discard_checkpoints`), so a later job, even
  one forced with `snakemake -f`, trains afresh instead of resuming a run that is over. It keeps the
  identity, marked finished, so the next run's log says which setting or input changed since (Snakemake
  has already deleted the model it is about to replace).
* **One trainer at a time.** The main process holds an exclusive lock (trainer_lock.py: `flock` on
  `trainer.lock`, or a lock file where a cluster filesystem's flock fails or holds per node) for as long as
  it lives. A second trainer on the same folder, such as the rerun of a workflow whose killed driver left
  its job running, stops with a message naming that process instead of resuming from checkpoints the first
  still writes. A crashed job's lock is released (flock: by the kernel; the lock file: it goes stale).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
from pathlib import Path

from transformers import TrainerCallback
from transformers.trainer_utils import rotate_checkpoints

from ..runtime.files import content_digest, file_digest, read_json, write_json
from ..runtime.model_process import is_main_process
from .trainer_lock import HELD_FILE, LOCK_FILE, CheckpointsInUse, lock_checkpoints

__all__ = ["CheckpointsInUse", "lock_checkpoints"]  # raised and used here, defined in trainer_lock
log = logging.getLogger(__name__)
FINGERPRINT_FILE = "fingerprint.json"
COMPLETE_FILE = "checkpoint_complete.json"
CHECKPOINT_NAME = re.compile(r"^checkpoint-(\d+)$")


def fingerprint(identity: dict) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()


def run_identity(settings: dict, inputs: dict[str, str | os.PathLike | None], code: str | None = None) -> dict:
    """What a training run depends on: its settings, the content digest of each input (file or folder) and
    the digest of the code it runs (bookkeeping/code_identity.py): a checkpoint of other code is never resumed."""
    digests = {name: None if path is None else content_digest(path) for name, path in inputs.items()}
    return {"settings": settings, "inputs": digests, "code": code}


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
    if old.get("code") != new.get("code"):
        parts.append(f"code changed ({old.get('code') or 'unrecorded'} -> {new.get('code') or 'unrecorded'})")
    return parts or ["the recorded identity's format"]


def _clear(checkpoint_dir: Path) -> None:
    """Remove everything in the folder but the lock (removing the lock's file would let a second trainer
    lock a new file of the same name)."""
    for entry in checkpoint_dir.iterdir():
        if entry.name in (LOCK_FILE, HELD_FILE):
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


def checkpoint_files(checkpoint: Path) -> dict[str, list]:
    """[size, sha256] of every file of a checkpoint folder but its completion marker, by relative name."""
    return {
        member.relative_to(checkpoint).as_posix(): [member.stat().st_size, file_digest(member)]
        for member in sorted(checkpoint.rglob("*"))
        if member.is_file() and member.name != COMPLETE_FILE
    }


def damage(checkpoint: Path) -> str | None:
    """Why `checkpoint` must not be resumed (None: it is the Trainer's, whole): no completion marker (the job
    ended while saving it), or a file that is not the one the marker records (truncated, edited, missing,
    added). Sizes first; a digest only where every size agrees."""
    marker = checkpoint / COMPLETE_FILE
    if not marker.is_file():
        return "the job ended while saving it"
    recorded = read_json(marker).get("files")
    if recorded is None:
        return "its completion marker records no file digests (written by an older version)"
    present = {member.relative_to(checkpoint).as_posix(): member for member in checkpoint.rglob("*") if member.is_file()}
    present.pop(COMPLETE_FILE, None)
    for name in sorted(set(recorded) | set(present)):
        if name not in present or name not in recorded:
            return f"{name} is {'missing' if name not in present else 'not among the files written'}"
        if present[name].stat().st_size != recorded[name][0]:
            return f"{name} has {present[name].stat().st_size} bytes where {recorded[name][0]} were written"
    for name, (_, digest) in sorted(recorded.items()):
        if file_digest(present[name]) != digest:
            return f"{name} changed since it was written (its sha256 differs)"
    return None


def last_complete_checkpoint(checkpoint_dir: Path, remove_incomplete: bool = True) -> str | None:
    """The highest-numbered checkpoint that is complete and intact (damage); the others are named in the log
    and removed, since the Trainer would otherwise write into or rotate them."""
    found = (
        sorted(
            ((int(m.group(1)), path) for path in checkpoint_dir.iterdir() if (m := CHECKPOINT_NAME.match(path.name)) and path.is_dir()),
            reverse=True,
        )
        if checkpoint_dir.exists()
        else []
    )
    for _, path in found:
        problem = damage(path)
        if problem is None:
            return str(path)
        log.warning("not resuming from checkpoint %s: %s; it is removed", path, problem)
        if remove_incomplete:
            shutil.rmtree(path, ignore_errors=True)
    if found:
        log.warning("no intact checkpoint is left in %s: training starts afresh", checkpoint_dir)
    return None


KEPT_CHECKPOINTS = 2  # the best and the latest: enough to resume and to pick the best


class CheckpointCompletion(TrainerCallback):
    """Marks a checkpoint complete once everything in it is written, then removes older checkpoints but the
    best. Register it last: callbacks run in order, so every other callback's part of the checkpoint
    (GOLD's lagged policy) is already there. The Trainer's own rotation is off (save_total_limit None):
    it runs before the marker exists, so a job killed between the two would find its newest checkpoint
    incomplete and the one before it deleted, and redo every update since the best."""

    def on_save(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            checkpoint = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            write_json(checkpoint / COMPLETE_FILE, {"global_step": state.global_step, "files": checkpoint_files(checkpoint)})
            rotate_checkpoints(args.output_dir, KEPT_CHECKPOINTS, state.best_model_checkpoint)


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
