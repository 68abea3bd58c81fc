"""Fetching a pinned source archive: streamed to a temporary sibling, checked against its checksum, and
only then renamed into place, so an interrupted or corrupted download never looks finished."""

from __future__ import annotations

import json
import logging
import os
import urllib.error
import urllib.request
from pathlib import Path

from tqdm.auto import tqdm

from ...runtime.errors import StepError
from ...runtime.files import atomic_open, file_digest, write_json

log = logging.getLogger(__name__)
ALGORITHMS = ("sha256", "md5")
CHUNK = 1 << 20


class DownloadError(StepError):
    """A source could not be fetched or failed its checksum; the message says what to do."""


def parse_checksum(checksum: str) -> tuple[str, str]:
    """`"sha256:<hex>"` or `"md5:<hex>"` -> (algorithm, lower-case hex digest)."""
    algorithm, _, digest = checksum.partition(":")
    if algorithm not in ALGORITHMS or not digest:
        raise ValueError(f"checksum '{checksum}' must look like sha256:<hex> or md5:<hex>")
    return algorithm, digest.lower()


def verify(path: str | os.PathLike, checksum: str | None, url: str) -> None:
    """Raise DownloadError if `path` does not match `checksum`; without a checksum, log the file's sha256 so
    it can be pinned."""
    if checksum is None:
        digest = file_digest(path, "sha256")
        log.warning("%s has no pinned checksum; its sha256 is %s: add `checksum: sha256:...` to the source", url, digest)
        return
    algorithm, expected = parse_checksum(checksum)
    actual = file_digest(path, algorithm)
    if actual != expected:
        raise DownloadError(
            f"{url}: {algorithm} {actual} does not match the pinned {expected}. The download was corrupted or the "
            "file changed upstream; delete it and rerun, or update `checksum` in the config if the change is intended"
        )


def fetch(url: str, destination: str | os.PathLike, checksum: str | None = None, timeout: float = 60.0) -> Path:
    """Download `url` to `destination` and verify it. `file://` URLs work too (mirrors, tests)."""
    destination = Path(destination)
    if checksum is not None:
        parse_checksum(checksum)  # a malformed checksum is a config error, not a download failure
    try:
        with atomic_open(destination, "wb") as handle:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                total = int(response.headers.get("Content-Length") or 0) or None
                with tqdm(total=total, unit="B", unit_scale=True, desc=destination.name, mininterval=5) as progress:
                    while block := response.read(CHUNK):
                        handle.write(block)
                        progress.update(len(block))
            handle.flush()
            verify(handle.name, checksum, url)
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise DownloadError(
            f"could not download {url} ({error}). Check that this machine can reach it; or fetch the file on a machine "
            f"that can and place it at {destination}, or set the source's url to a local copy (file:///path/to/the/file)"
            + ("; the workflow then verifies it against the pinned checksum" if checksum else "")
        ) from None
    write_json(origin_file(destination), {"url": url})
    log.info("downloaded %s -> %s (%d bytes)", url, destination, destination.stat().st_size)
    return destination


def origin_file(archive: str | os.PathLike) -> Path:
    """Where fetch records the URL an archive came from (beside it)."""
    return Path(f"{archive}.origin.json")


def archive_problem(archive: str | os.PathLike, url: str | None, checksum: str | None) -> str | None:
    """What is wrong with an archive already on disk for the configured `url` and `checksum` (None: nothing,
    or no archive yet). Neither setting is in any job's identity, so the workflow asks this when it starts:
    a pinned checksum the archive does not match, or a URL other than the one it came from without a
    checksum to say the file is the same."""
    archive = Path(archive)
    if not archive.is_file():
        return None
    if checksum is not None:
        algorithm, expected = parse_checksum(checksum)
        actual = file_digest(archive, algorithm)
        if actual != expected:
            return (
                f"{archive} has {algorithm} {actual}, not the pinned {expected}: delete it to download it again (the task's data and "
                "models are then rebuilt if it differs), or correct `checksum`"
            )
        return None
    origin = origin_file(archive)
    recorded = json.loads(origin.read_text(encoding="utf-8")).get("url") if origin.is_file() else None
    if url is not None and recorded is not None and recorded != url:
        return (
            f"{archive} was downloaded from {recorded}, but the config now names {url}: delete it to download the new URL, "
            "or pin `checksum` to the archive's sha256 if both serve the same file"
        )
    return None
