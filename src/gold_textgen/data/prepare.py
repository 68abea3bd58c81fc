"""The `prepare_dataset` stage: read the task's source and write the contract's jsonl files."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from pathlib import Path

from ..workflow.files import write_jsonl
from .records import check_unique_ids
from .sources import load_source_splits
from .sources.download import verify

log = logging.getLogger(__name__)


def size_warnings(task: str, sizes: Mapping[str, int], expected: Mapping[str, int]) -> list[str]:
    """One message per split whose size differs from the expected one (the paper's Appendix A)."""
    return [
        f"task {task}, split {split}: {sizes[split]} examples, but the paper reports {expected[split]} "
        f"({sizes[split] - expected[split]:+d}); results may not be comparable"
        for split in sizes
        if split in expected and sizes[split] != expected[split]
    ]


def prepare_dataset(
    source: dict, outputs: Mapping[str, str | Path], base_dir: str | Path = ".", archive: str | Path | None = None, task: str = "?"
) -> dict[str, int]:
    """Load every split, check it, and write `outputs[split]`; returns the number of records per split."""
    if archive is not None:
        verify(archive, source.get("checksum"), source.get("url", str(archive)))  # also a file placed by hand
    splits = load_source_splits(source, list(outputs), base_dir, archive)
    sizes = {}
    for split, records in splits.items():
        if not records:
            raise ValueError(f"split '{split}' of the {source['kind']} source has no records")
        check_unique_ids(records, f"split '{split}' of the {source['kind']} source")
        sizes[split] = write_jsonl(outputs[split], records)
        log.info("%s: %d records -> %s", split, sizes[split], outputs[split])
    for message in size_warnings(task, sizes, source.get("expected_sizes") or {}):
        log.warning(message)
        print(f"WARNING: {message}", file=sys.__stderr__)  # also on the driver's terminal, not only in the log
    return sizes
