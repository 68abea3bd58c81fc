"""The data stages: `prepare_dataset` writes splits (one job for train and valid, one for test), and
`verify_dataset` checks the data set as a whole (archive checksum, pairs shared between splits, sizes, and
for a task scored by final answers, that its references state them).

Three jobs, so that a setting only the test split reads (`num_test`, a test file) re-makes the test split
and re-scores the models but never rewrites the training splits, so never retrains; and a setting only
the checks read (checksum, url, expected sizes, max_split_overlap) reruns the checks alone (see
config.views.training_source_view and verification_view)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from pathlib import Path

from ..runtime.files import read_jsonl, write_json, write_jsonl
from .answer_format import states_answer
from .records import check_unique_ids
from .sources import load_source_splits
from .sources.download import verify

log = logging.getLogger(__name__)
HELD_OUT = ("valid", "test")


MIN_ANSWER_SHARE = 0.5


class AnswerFormatError(ValueError):
    """A task scored by final answers whose references mostly state none."""


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


def prepare_dataset(
    source: dict, outputs: Mapping[str, str | Path], base_dir: str | Path = ".", archive: str | Path | None = None, task: str = "?"
) -> dict[str, int]:
    """Load the splits named in `outputs` and write them; returns the records per split. `source` holds the
    settings these splits read (config.views.training_source_view for train and valid)."""
    splits = load_source_splits(source, list(outputs), base_dir, archive)
    sizes = {}
    for split, records in splits.items():
        if not records:
            raise ValueError(f"split '{split}' of the {source['kind']} source has no records")
        check_unique_ids(records, f"split '{split}' of the {source['kind']} source")
        sizes[split] = write_jsonl(outputs[split], records)
        log.info("%s: %d records -> %s", split, sizes[split], outputs[split])
    return sizes


def check_answers_stated(task: str, splits: Mapping[str, list[dict]], metric: str) -> None:
    """A task scored by final answers needs references that state them (a number after ####): most of the
    held-out references must, or every score would be 0 whatever the model writes."""
    for split in HELD_OUT:
        references = [record["target"] for record in splits.get(split, [])]
        stated = sum(map(states_answer, references))
        if references and stated < MIN_ANSWER_SHARE * len(references):
            raise AnswerFormatError(
                f"task {task}: the metric {metric} scores final answers after '####', but only {stated} of the "
                f"{len(references)} {split} references state one; choose bleu or rouge2 for this task (tasks.{task}.metric), "
                "or write each reference's answer after '####'"
            )


def verify_dataset(
    checks: dict, prepared: Mapping[str, str | Path], report: str | Path, archive: str | Path | None = None, task: str = "?"
) -> dict:
    """Check the archive against its pinned checksum and the prepared splits (`prepared`: split -> file)
    against each other (shared pairs, `max_split_overlap`) and the `expected_sizes`; write what was found
    to `report` (JSON) and return it. `checks` holds the verification settings (verification_view)."""
    if archive is not None:
        verify(archive, checks.get("checksum"), checks.get("url") or str(archive))  # also a file placed by hand
    splits = {split: read_jsonl(location) for split, location in prepared.items()}
    check_overlaps(task, splits, checks["max_split_overlap"])
    if checks.get("answer_metric"):
        check_answers_stated(task, splits, checks["answer_metric"])
    sizes = {split: len(records) for split, records in splits.items()}
    warnings = size_warnings(task, sizes, checks.get("expected_sizes") or {})
    for message in warnings:
        log.warning(message)
        print(f"WARNING: {message}", file=sys.__stderr__)  # also on the driver's terminal, not only in the log
    found = {
        "sizes": sizes,
        "shared_pairs": [
            {"split": held_out, "with": earlier, "shared": shared, "of": total}
            for held_out, earlier, shared, total in split_overlaps(splits)
        ],
        "size_warnings": warnings,
    }
    write_json(report, found)
    return found
