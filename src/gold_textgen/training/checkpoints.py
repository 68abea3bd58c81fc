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
  one forced with `snakemake -f`, trains afresh instead of resuming a run that is over.
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

from ..workflow.files import content_digest, read_json, write_json
from ..workflow.runtime import is_main_process

log = logging.getLogger(__name__)
FINGERPRINT_FILE = "fingerprint.json"
COMPLETE_FILE = "checkpoint_complete.json"
CHECKPOINT_NAME = re.compile(r"^checkpoint-(\d+)$")


def fingerprint(identity: dict) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()


def run_identity(settings: dict, inputs: dict[str, str | os.PathLike | None]) -> dict:
    """What a training run depends on: its settings and the content digest of each input (file or folder)."""
    return {"settings": settings, "inputs": {name: None if path is None else content_digest(path) for name, path in inputs.items()}}


def _changed_parts(old: dict, new: dict) -> list[str]:
    parts = [] if old.get("settings") == new["settings"] else ["the training settings"]
    old_inputs = old.get("inputs", {})
    parts += [f"input '{name}'" for name, digest in new["inputs"].items() if old_inputs.get(name) != digest]
    return parts or ["the recorded identity's format"]


def claim_checkpoints(checkpoint_dir: str | Path, identity: dict) -> str | None:
    """Make `checkpoint_dir` this run's: return the last complete checkpoint of a run with exactly this
    identity (None: start fresh), after removing checkpoints of another identity and incomplete ones and
    recording this identity in the folder.

    Only the first process removes and records; the others of a multi-process run only read."""
    checkpoint_dir = Path(checkpoint_dir)
    marker = checkpoint_dir / FINGERPRINT_FILE
    main = is_main_process()
    wanted = fingerprint(identity)
    if checkpoint_dir.exists():
        recorded = read_json(marker) if marker.exists() else None
        if recorded is None or recorded.get("fingerprint") != wanted:
            reason = (
                "it records no identity"
                if recorded is None
                else "changed: " + ", ".join(_changed_parts(recorded.get("identity", {}), identity))
            )
            log.info("starting fresh: the checkpoints in %s belong to another run (%s)", checkpoint_dir, reason)
            if not main:
                return None
            shutil.rmtree(checkpoint_dir)
    if main:
        checkpoint_dir.mkdir(parents=True, exist_ok=True)
        if not marker.exists():
            write_json(marker, {"fingerprint": wanted, "identity": identity})
    return last_complete_checkpoint(checkpoint_dir, remove_incomplete=main)


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
    """Remove a finished run's checkpoints: its model is written, and nothing may resume it."""
    if is_main_process():
        shutil.rmtree(checkpoint_dir, ignore_errors=True)
