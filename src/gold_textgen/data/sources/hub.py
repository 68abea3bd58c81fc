"""Datasets on the Hugging Face hub (CNN/DailyMail, XSum), loaded with `datasets.load_dataset` at a pinned
revision. `path` may also be a local directory in the hub repository's layout (a mirror, or a test).

The datasets library caches what it downloads (`HF_HOME`); with `HF_DATASETS_OFFLINE=1` a job reads only
that cache, which is how a compute node without internet runs this step after a login node fetched it.
"""

from __future__ import annotations

import logging

from ..records import DataFormatError, make_record

log = logging.getLogger(__name__)


class HubLoadError(RuntimeError):
    """The dataset could not be loaded; the message names it and says what to check."""


def describe(source: dict) -> str:
    parts = [source["path"]]
    if source.get("name"):
        parts.append(f"config {source['name']}")
    if source.get("revision"):
        parts.append(f"revision {source['revision']}")
    return ", ".join(parts)


def load_split(source: dict, split: str):
    from datasets import load_dataset

    hub_split = source["splits"][split]
    try:
        return load_dataset(
            source["path"], source.get("name"), revision=source.get("revision"), data_files=source.get("data_files"), split=hub_split
        )
    except Exception as error:  # the datasets library raises many types (network, missing config, bad files)
        raise HubLoadError(
            f"could not load split '{hub_split}' of {describe(source)}: {type(error).__name__}: {error}. The hub must be "
            "reachable from this job, or HF_HOME must hold a cache of it (then set HF_DATASETS_OFFLINE=1)"
        ) from error


def to_records(rows, source: dict, split: str) -> list[dict]:
    """Contract records from the dataset's rows; a bad row is named by dataset, split, row number and id."""
    fields = (source["source_field"], source["target_field"], source["id_field"])
    missing = [field for field in fields if field not in rows.column_names]
    if missing:
        raise DataFormatError(f"{describe(source)} split {split}: no column '{missing[0]}' (columns: {', '.join(rows.column_names)})")
    records = []
    for index, row in enumerate(rows):
        record_id = row[fields[2]]
        where = f"{describe(source)} split {split} row {index} (id {record_id})"
        records.append(make_record(record_id, row[fields[0]], row[fields[1]], where))
    return records


def load_splits(source: dict, splits: list[str]) -> dict[str, list[dict]]:
    loaded = {}
    for split in splits:
        rows = load_split(source, split)
        log.info("%s: %d rows in split %s", describe(source), len(rows), source["splits"][split])
        loaded[split] = to_records(rows, source, split)
    return loaded
