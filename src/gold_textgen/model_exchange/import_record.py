"""Where an imported model is (config `tasks.<task>.imported_models`), recorded in the workflow's model folder.

An imported model's folder in the workflow (results/<experiment>/models/<task>/<name>/seed<n>) holds one
file, IMPORT_RECORD: where the checkpoint is and what it is. The weights stay where they are (a 7B model is
not copied once per seed); the rule that writes the record reruns, and the evaluation after it, when a
file of the checkpoint changes (`folder_identity` is its param). Light: the workflow plans with it;
imported.py loads the model.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

from ..runtime.errors import ConfigError
from ..runtime.files import read_json, write_json

log = logging.getLogger(__name__)

IMPORT_RECORD = "imported_model.json"
ADAPTER_CONFIG = "adapter_config.json"
TOKENIZER_FILES = ("tokenizer_config.json", "tokenizer.json")


def checkpoint_of(path: str, seed: int) -> Path:
    """The checkpoint folder a config `path` names for `seed` (`{seed}` in it stands for the seed)."""
    return Path(path.replace("{seed}", str(seed)))


def missing_checkpoint(config: dict) -> str | None:
    """The first imported model (config `tasks.<task>.imported_models`) whose folder is not on this machine
    for one of the experiment's seeds, as an error naming its key and folder; None when all are there."""
    for task, settings in config["tasks"].items():
        if task not in config["experiment"]["tasks"]:
            continue
        for name, entry in settings["imported_models"].items():
            for seed in config["experiment"]["seeds"]:
                folder = checkpoint_of(entry["path"], seed)
                if not folder.is_dir():
                    seeds = f" (seed {seed})" if "{seed}" in entry["path"] else ""
                    return f"config key tasks.{task}.imported_models.{name}.path: {folder}{seeds} is not a folder on this machine"
    return None


def folder_identity(folder: Path) -> str:
    """A digest of every file's name, size and modification time under `folder` (cheap: no file is read),
    or "missing": it changes when the checkpoint is rewritten."""
    if not folder.is_dir():
        return "missing"
    digest = hashlib.sha256()
    for file in sorted(path for path in folder.rglob("*") if path.is_file()):
        status = file.stat()
        digest.update(f"{file.relative_to(folder)}\t{status.st_size}\t{status.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def checked_import(checkpoint: Path, base: str | None, key: str) -> dict:
    """The import record of `checkpoint` after checking it is a model folder; `key` (the config key that
    named it) goes into every error. The caller adds how its tokenizer loads (`tokenizer`:
    data/checkpoint_tokenizer.py) and writes it (write_import_record)."""
    if not checkpoint.is_dir():
        raise ConfigError(f"config key {key}: {checkpoint} is not a folder")
    adapter = (checkpoint / ADAPTER_CONFIG).is_file()
    if not adapter and not (checkpoint / "config.json").is_file():
        raise ConfigError(f"config key {key}: {checkpoint} holds neither a model (config.json) nor a LoRA adapter ({ADAPTER_CONFIG})")
    if adapter:
        base = base or read_json(checkpoint / ADAPTER_CONFIG).get("base_model_name_or_path")
        if not base:
            raise ConfigError(f"config key {key}: the adapter in {checkpoint} names no base model; set `base` beside `path`")
        if Path(base).is_dir():
            base = str(Path(base).resolve())
    if not tokenizer_in(checkpoint) and not (base and tokenizer_in(Path(base))):
        raise ConfigError(f"config key {key}: no tokenizer in {checkpoint}" + (f" nor in its base {base}" if base else ""))
    return {"checkpoint": str(checkpoint.resolve()), "adapter": adapter, "base": base if adapter else None}


def write_import_record(model_dir: Path, record: dict) -> None:
    model_dir.mkdir(parents=True, exist_ok=True)
    write_json(model_dir / IMPORT_RECORD, record)
    adapter = f" (a LoRA adapter over {record['base']})" if record["adapter"] else ""
    log.info("%s: imported from %s%s", model_dir, record["checkpoint"], adapter)


def import_record(model_dir: Path) -> dict | None:
    """What an imported model's folder records, or None for a model the workflow trained."""
    file = Path(model_dir) / IMPORT_RECORD
    return json.loads(file.read_text()) if file.is_file() else None


def tokenizer_folder(model_dir: Path) -> Path:
    """The folder whose tokenizer the saved model reads: the model folder itself, or for an imported model
    its checkpoint (an adapter without a tokenizer: its base)."""
    record = import_record(model_dir)
    return Path(model_dir) if record is None else recorded_tokenizer_folder(record)


def recorded_tokenizer_folder(record: dict) -> Path:
    """The folder holding an import record's tokenizer: the checkpoint's, else (an adapter) its base's."""
    checkpoint = Path(record["checkpoint"])
    return checkpoint if tokenizer_in(checkpoint) else Path(record["base"])


def tokenizer_in(folder: Path) -> bool:
    return any((folder / name).is_file() for name in TOKENIZER_FILES)
