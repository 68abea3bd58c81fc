"""Tables that a later job reads back (token NLL tables, reward caches), written with a digest of their
contents and read only while it still matches.

Parquet files as pandas writes them carry no checksum of their data: one flipped byte of a reward cache
(a bad disk, a copy cut short and patched) changes a number that fine-tuning then trains on without a word.
Here every data page is written with its CRC (pyarrow's page checksums, verified on read) and the schema's
metadata holds a sha256 of the table's contents (column names, types and values), which covers what page
checksums do not (the dictionary, the footer). A file that fails either check, or that holds no digest
(written by another program), is an error that names it and how to rebuild it."""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pandas as pd
import pyarrow
import pyarrow.parquet as parquet

from .files import atomic_open

DIGEST_KEY = b"gold_textgen.content_sha256"


class DamagedTableError(ValueError):
    """A checked table that cannot be trusted; the message names the file."""


def content_digest(frame: pd.DataFrame) -> str:
    """sha256 of the columns' names, types and values, in order (numbers as their machine bytes)."""
    digest = hashlib.sha256()
    for name in frame.columns:
        column = frame[name]
        digest.update(json.dumps([str(name), str(column.dtype)]).encode())
        values = column.to_numpy()
        if values.dtype == object:
            digest.update(json.dumps(values.tolist(), default=str).encode())
        else:
            digest.update(np.ascontiguousarray(values).tobytes())
    return digest.hexdigest()


def write_checked_parquet(frame: pd.DataFrame, path: str | os.PathLike) -> None:
    """`frame` as parquet at `path` (atomically), with page checksums and its content digest."""
    table = pyarrow.Table.from_pandas(frame, preserve_index=False)
    metadata = {**(table.schema.metadata or {}), DIGEST_KEY: content_digest(frame).encode()}
    with atomic_open(path, "wb") as handle:
        parquet.write_table(table.replace_schema_metadata(metadata), handle, write_page_checksum=True)


def read_checked_parquet(path: str | os.PathLike, rebuild: str) -> pd.DataFrame:
    """The table at `path`, after its page checksums and content digest were checked; `rebuild` says what
    remakes it (for the message: 'rule cache_rewards')."""
    advice = f"delete it and run the workflow again, which rebuilds it ({rebuild})"
    try:  # the pages' checksums, then the schema's metadata (pandas' column types) as pandas reads it
        table = parquet.read_table(path, page_checksum_verification=True)
        frame = table.to_pandas()
    except Exception as error:  # a damaged footer or metadata can fail any way its parsers do
        raise DamagedTableError(
            f"{path} cannot be read ({type(error).__name__}: {error}): it was damaged after it was written; {advice}"
        ) from None
    expected = (table.schema.metadata or {}).get(DIGEST_KEY)
    if expected is None:
        raise DamagedTableError(f"{path} holds no content digest: it was not written by this workflow (or by an older version); {advice}")
    if content_digest(frame) != expected.decode(errors="replace"):
        raise DamagedTableError(f"{path}: its contents changed after it was written (the content digest no longer matches); {advice}")
    return frame
