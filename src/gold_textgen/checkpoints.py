"""Resumable training: Trainer checkpoints live outside the rule's declared output, tagged with a
fingerprint of everything that determines the run, so a restarted job (preemption, `--rerun-incomplete`,
a retry) resumes from the last checkpoint, while a changed config starts over instead of resuming stale
state."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from transformers.trainer_utils import get_last_checkpoint

from .io_utils import read_json, write_json

FINGERPRINT_FILE = "fingerprint.json"


def fingerprint(settings: dict) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()


def resume_point(checkpoint_dir: str | Path, settings: dict) -> str | None:
    """The last checkpoint of an identical earlier run, or None (stale checkpoints are removed)."""
    checkpoint_dir = Path(checkpoint_dir)
    wanted = fingerprint(settings)
    marker = checkpoint_dir / FINGERPRINT_FILE
    if checkpoint_dir.exists() and (not marker.exists() or read_json(marker).get("fingerprint") != wanted):
        shutil.rmtree(checkpoint_dir)
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    write_json(marker, {"fingerprint": wanted, "settings": settings})
    return get_last_checkpoint(str(checkpoint_dir))
