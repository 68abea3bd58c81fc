"""File times that survive a copy. Snakemake orders jobs by file times (its `mtime` trigger: an output older
than one of its inputs is redone), and a copy that does not keep them (`cp -r`, `scp -r`, `rsync` without
`-t`, an archive that drops times) leaves every output with the time of the copy, in whatever order the
copy wrote them: the next run would retrain every model.

So every run that succeeds records, for each output of its jobs, the time Snakemake reads (a file's own; a
`directory()` output's `.snakemake_timestamp`) and a digest of its contents (.snakemake/gold_textgen/file_times.json,
beside Snakemake's own records, paths relative to the working folder so the record travels with a copy). Before
the next run plans anything, an output whose time differs from the record but whose contents are the ones
recorded gets its recorded time back: a copy of a finished run plans nothing. An output whose contents
changed keeps its new time, and Snakemake reruns what reads it, as always.

Only contents count: touching an unchanged file no longer reruns what reads it (`snakemake -R RULE` or
`--forcerun TARGET` does that).

An output changed in place, with its time kept, is found too (`changed_in_place`): a `directory()`
output's time is its `.snakemake_timestamp`, which a file swapped inside the folder does not touch, and a
file copied over another with `cp -p` keeps the time of its source. The cheap listing of each recorded
output (names, sizes, modification and status-change times of its files; the status-change time is one
no copy or `touch` can set back) is compared first, and only an output whose listing changed is read
again for its digest. One whose contents differ from the recorded ones gets the current time, as an
edited file has: Snakemake then reruns what reads it, and the run says which outputs changed."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from .files import content_digest, write_json

RECORD = Path(".snakemake") / "gold_textgen" / "file_times.json"
TIMESTAMP = ".snakemake_timestamp"  # where Snakemake keeps a directory output's time


def time_carrier(path: Path) -> Path:
    """The file whose time Snakemake reads for output `path`."""
    return path / TIMESTAMP if path.is_dir() and (path / TIMESTAMP).is_file() else path


def listing(path: Path) -> str:
    """A cheap signature of `path`'s current state (names, sizes, modification and status-change times of
    its files; a folder's time stamp left out, which the restore sets): equal signatures need no new
    digest."""
    if not path.is_dir():
        info = path.stat()
        return f"{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"
    state = hashlib.sha256()
    for member in sorted(p for p in path.rglob("*") if p.is_file() and p.name != TIMESTAMP):
        info = member.stat()
        state.update(f"{member.relative_to(path).as_posix()}\0{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}\n".encode())
    return state.hexdigest()


def read_record(workdir: Path) -> dict[str, dict]:
    path = workdir / RECORD
    if not path.is_file():
        return {}
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # an unreadable record only costs the reruns a copy would cause without one
    return entries if isinstance(entries, dict) else {}


def entry(path: Path, known: dict | None) -> dict:
    """The record of output `path`: its time, its listing and its contents' digest (taken over from `known`
    when the listing did not change since)."""
    state = listing(path)
    digest = known["digest"] if known and known.get("listing") == state else content_digest(path)
    size = None if path.is_dir() else path.stat().st_size
    return {"ns": time_carrier(path).stat().st_mtime_ns, "size": size, "listing": state, "digest": digest}


def record(workdir: str | os.PathLike, outputs: Iterable[str]) -> int:
    """Record the time and contents of each existing output (relative to `workdir`), keeping the entries of
    other outputs (other experiments of the folder). Returns how many outputs were recorded."""
    workdir = Path(workdir)
    entries = read_record(workdir)
    count = 0
    for name in sorted(set(outputs)):
        path = workdir / name
        if path.is_symlink() or not path.exists():
            continue  # a link's time is its target's business; a missing output has nothing to keep
        entries[name] = entry(path, entries.get(name))
        count += 1
    write_json(workdir / RECORD, entries)
    return count


def restore(workdir: str | os.PathLike) -> int:
    """Give each recorded output whose time changed but whose contents did not its recorded time back.
    Returns how many got it back."""
    workdir = Path(workdir)
    entries = read_record(workdir)
    restored = 0
    for name, known in entries.items():
        path = workdir / name
        if path.is_symlink() or not path.exists():
            continue
        carrier = time_carrier(path)
        if carrier.stat().st_mtime_ns == known.get("ns"):
            continue  # changed_in_place looks at these
        if not path.is_dir() and path.stat().st_size != known.get("size"):
            continue  # another size: other contents, no digest needed
        if content_digest(path) != known.get("digest"):
            continue
        os.utime(carrier, ns=(known["ns"], known["ns"]))
        entries[name] = {**known, "listing": listing(path)}
        restored += 1
    if restored:
        write_json(workdir / RECORD, entries)
    return restored


def changed_in_place(workdir: str | os.PathLike, under: str = "") -> list[str]:
    """The recorded outputs (under the folder `under`, relative to `workdir`) whose contents changed while
    their time stayed the recorded one: each gets the current time, so that what reads it reruns, and is
    returned by name. An output whose listing moved but whose contents are the recorded ones (a copy, a
    `chmod`) only has its listing recorded anew."""
    workdir = Path(workdir)
    entries = read_record(workdir)
    changed, relisted = [], False
    for name, known in entries.items():
        path = workdir / name
        if not name.startswith(under) or path.is_symlink() or not path.exists():
            continue
        carrier = time_carrier(path)
        if carrier.stat().st_mtime_ns != known.get("ns"):
            continue  # a new time is Snakemake's to act on (and restore's)
        state = listing(path)
        if state == known.get("listing"):
            continue  # an equal listing: unchanged contents
        if content_digest(path) == known.get("digest"):
            entries[name] = {**known, "listing": state}
            relisted = True
            continue
        carrier.touch()
        entries[name] = entry(path, None)
        changed.append(name)
    if changed or relisted:
        write_json(workdir / RECORD, entries)
    return changed
