"""The `prepare_dataset` stage: dispatch on the task's source kind and write the contract's jsonl files."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from .data import check_unique_ids, load_local_split
from .demo_task import DemoTaskSpec, build_lexicon, generate_split
from .io_utils import write_jsonl

log = logging.getLogger(__name__)


def load_source_splits(source: dict, splits: list[str], base_dir: str | Path = ".") -> dict[str, list[dict]]:
    if source["kind"] == "synthetic":
        spec = DemoTaskSpec.from_config(source)
        lexicon = build_lexicon(spec)
        return {split: generate_split(spec, split, lexicon) for split in splits}
    if source["kind"] == "local":
        return {split: load_local_split(source, split, base_dir) for split in splits}
    raise ValueError(f"unknown source kind '{source['kind']}' (expected synthetic or local)")


def prepare_dataset(source: dict, outputs: Mapping[str, str | Path], base_dir: str | Path = ".") -> dict[str, int]:
    """Load every split, check it, and write `outputs[split]`; returns the number of records per split."""
    splits = load_source_splits(source, list(outputs), base_dir)
    sizes = {}
    for split, records in splits.items():
        if not records:
            raise ValueError(f"split '{split}' of the {source['kind']} source has no records")
        check_unique_ids(records, f"split '{split}'")
        sizes[split] = write_jsonl(outputs[split], records)
        log.info("%s: %d records -> %s", split, sizes[split], outputs[split])
    return sizes
