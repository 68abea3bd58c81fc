"""The data stages: `prepare_dataset` writes the training splits (train, valid); `verify_dataset` writes the
test split and checks the data set as a whole (archive checksum, sizes, pairs shared between splits).

Two jobs, so that the settings only the test split or the checks read (`num_test`, a test file, a checksum,
the expected sizes) re-make the test split and re-score the models, but never rewrite the training
splits, and so never retrain (see workflow.views.training_source_view)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from pathlib import Path

from ..workflow.files import read_jsonl, write_jsonl
from .records import check_unique_ids
from .sources import load_source_splits
from .sources.download import verify

log = logging.getLogger(__name__)
HELD_OUT = ("valid", "test")


class SplitOverlapError(ValueError):
    """Too many dev or test pairs also occur in an earlier split; the message says how many and what to do."""


def size_warnings(task: str, sizes: Mapping[str, int], expected: Mapping[str, int]) -> list[str]:
    """One message per split whose size differs from the expected one (the paper's Appendix A)."""
    return [
        f"task {task}, split {split}: {sizes[split]} examples, but the paper reports {expected[split]} "
        f"({sizes[split] - expected[split]:+d}); results may not be comparable"
        for split in sizes
        if split in expected and sizes[split] != expected[split]
    ]


def split_overlaps(splits: Mapping[str, list[dict]]) -> list[tuple[str, str, int, int]]:
    """(held-out split, earlier split, shared pairs, held-out pairs) for valid against train and test against
    train and valid: a pair is shared when its source and target both occur together in the earlier split."""
    order = [split for split in ("train", "valid", "test") if split in splits]
    found = []
    for position, held_out in enumerate(order):
        if held_out not in HELD_OUT:
            continue
        for earlier in order[:position]:
            pairs = {(record["source"], record["target"]) for record in splits[earlier]}
            shared = sum((record["source"], record["target"]) in pairs for record in splits[held_out])
            found.append((held_out, earlier, shared, len(splits[held_out])))
    return found


def check_overlaps(task: str, splits: Mapping[str, list[dict]], max_share: float) -> None:
    """Log every split pair's shared pairs; raise SplitOverlapError where their share exceeds `max_share`."""
    for held_out, earlier, shared, total in split_overlaps(splits):
        share = shared / total if total else 0.0
        log.info("task %s: %d of %d %s pairs (%.1f%%) also occur in %s", task, shared, total, held_out, 100 * share, earlier)
        if share > max_share:
            raise SplitOverlapError(
                f"task {task}: {shared} of the {total} {held_out} pairs ({100 * share:.1f}%) also occur in the {earlier} split, "
                f"more than source.max_split_overlap ({100 * max_share:g}%); scores on them are not held-out scores. "
                "Split the data so no pair is in both, or raise max_split_overlap if the repeats are genuine"
            )


def _load_and_write(source: dict, outputs: Mapping[str, str | Path], base_dir, archive) -> dict[str, list[dict]]:
    splits = load_source_splits(source, list(outputs), base_dir, archive)
    for split, records in splits.items():
        if not records:
            raise ValueError(f"split '{split}' of the {source['kind']} source has no records")
        check_unique_ids(records, f"split '{split}' of the {source['kind']} source")
        count = write_jsonl(outputs[split], records)
        log.info("%s: %d records -> %s", split, count, outputs[split])
    return splits


def prepare_dataset(
    source: dict, outputs: Mapping[str, str | Path], base_dir: str | Path = ".", archive: str | Path | None = None, task: str = "?"
) -> dict[str, int]:
    """Load the splits named in `outputs` (train and valid) and write them; returns the records per split.
    `source` holds the settings these splits read (workflow.views.training_source_view)."""
    splits = _load_and_write(source, outputs, base_dir, archive)
    return {split: len(records) for split, records in splits.items()}


def verify_dataset(
    source: dict,
    test_output: str | Path,
    prepared: Mapping[str, str | Path],
    base_dir: str | Path = ".",
    archive: str | Path | None = None,
    task: str = "?",
) -> dict[str, int]:
    """Check the archive against its pinned checksum, write the test split, then check the whole data set
    (`prepared`: the train and valid files already written): pairs shared between splits and the sizes
    the config expects. Returns the records per split."""
    if archive is not None:
        verify(archive, source.get("checksum"), source.get("url", str(archive)))  # also a file placed by hand
    splits = {split: read_jsonl(location) for split, location in prepared.items()}
    splits.update(_load_and_write(source, {"test": test_output}, base_dir, archive))
    check_overlaps(task, splits, source.get("max_split_overlap", 0.05))
    sizes = {split: len(records) for split, records in splits.items()}
    for message in size_warnings(task, sizes, source.get("expected_sizes") or {}):
        log.warning(message)
        print(f"WARNING: {message}", file=sys.__stderr__)  # also on the driver's terminal, not only in the log
    return sizes
