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
edited file has: Snakemake then reruns what reads it, and the run says which outputs changed.

Every job records its outputs as it finishes (output_records.py, under `JOB_RECORDS`), and every plan folds
those records into the run's record first (`fold_job_records`): the outputs of a run that stopped early
are known by their contents too. The plan's record is what a job's inputs are checked against when it
starts: whatever the plan took as current (restored, or changed and rerun from) is read; a change after
the plan stops the job."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .files import content_digest, file_digest, write_json

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


JOB_RECORDS = Path(".snakemake") / "gold_textgen" / "job_outputs"  # each written by the job whose output it is (output_records.py)


def record_path(workdir: Path, name: str) -> Path:
    return workdir / JOB_RECORDS / f"{hashlib.sha256(name.encode()).hexdigest()[:40]}.json"


def output_digest(path: Path) -> str:
    """`content_digest` of an output as Snakemake leaves it: a `directory()` output holds Snakemake's empty
    time stamp file once its job is done, so a job recording its own output folder counts that file in."""
    if not path.is_dir() or (path / TIMESTAMP).is_file():
        return content_digest(path)
    members = [(member.relative_to(path).parts, file_digest(member)) for member in path.rglob("*") if member.is_file()]
    members.append(((TIMESTAMP,), hashlib.sha256(b"").hexdigest()))
    digest = hashlib.sha256()
    for parts, member_digest in sorted(members):  # content_digest's order: the members' paths, part by part
        digest.update(f"{'/'.join(parts)}\0{member_digest}\n".encode())
    return digest.hexdigest()


def write_job_record(workdir: Path, name: str, state: str, digest: str) -> None:
    """Record output `name`'s listing and digest. Jobs that read one input at once may record it together:
    each writes a temporary of its own and renames it into place, and none removes another's."""
    target = record_path(workdir, name)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(prefix=f".{target.name}.", suffix=f".{os.getpid()}.part", dir=target.parent)
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        json.dump({"name": name, "listing": state, "digest": digest}, stream)
    os.replace(partial, target)


def read_job_record(file: Path) -> dict | None:
    """A job's record of one output (None: missing, or cut short)."""
    try:
        record = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("name"), str) else None


def written_record(workdir: Path, name: str) -> dict | None:
    """What the job that wrote `name` recorded of it (None: no job of this version wrote it)."""
    record = read_job_record(record_path(workdir, name))
    return record if record and record["name"] == name else None


def read_record(workdir: Path) -> dict[str, dict]:
    path = workdir / RECORD
    if not path.is_file():
        return {}
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # an unreadable record only costs the reruns a copy would cause without one
    return entries if isinstance(entries, dict) else {}


def entry(path: Path, *known: dict | None) -> dict:
    """The record of output `path`: its time, its listing and its contents' digest (taken over from a `known`
    record whose listing is the current one: the run's last record, or what the job that wrote it recorded)."""
    state = listing(path)
    same = [record for record in known if record and record.get("listing") == state]
    digest = same[0]["digest"] if same else content_digest(path)
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
        entries[name] = entry(path, entries.get(name), written_record(workdir, name))
        count += 1
    write_json(workdir / RECORD, entries)
    return count


def fold_job_records(workdir: str | os.PathLike) -> list[str]:
    """Take what each job recorded of its outputs (output_records.py) into the run's record, before a plan
    reads it: the outputs of a run that stopped before its end, and those a job rewrote since the run's
    record, are known by their contents too (with their time as found: the record's time is kept where it
    holds the same contents, for `restore`). An output that changed after its job wrote it gets the current
    time, as one changed in place does (what reads it reruns on its new contents), and is returned by name."""
    workdir = Path(workdir)
    entries = read_record(workdir)
    changed, folded = [], []
    for record_file in sorted((workdir / JOB_RECORDS).glob("*.json")):
        written = read_job_record(record_file)
        if written is None:
            folded.append(record_file)  # a record cut short: the run's record decides instead
            continue
        name = written["name"]
        path = workdir / name
        known = entries.get(name)
        if known and known.get("digest") == written.get("digest"):
            folded.append(record_file)  # the run's record holds these contents already, with their time
            continue
        if path.exists() and not path.is_symlink():
            state = listing(path)
            if state != written.get("listing"):
                digest = content_digest(path)
                if digest != written.get("digest"):
                    time_carrier(path).touch()
                    changed.append(name)
                written = {"listing": state, "digest": digest}
            entries[name] = entry(path, written)
        folded.append(record_file)
    if folded:
        write_json(workdir / RECORD, entries)
    for leftover in [*folded, *(workdir / JOB_RECORDS).glob(".*.part")]:  # .part: a record whose job was killed mid-write
        leftover.unlink(missing_ok=True)
    return changed


def restore(workdir: str | os.PathLike) -> int:
    """Give each recorded output whose time changed but whose contents did not its recorded time back.
    Returns how many got it back."""
    workdir = Path(workdir)
    entries = read_record(workdir)
    restored, taken = 0, 0
    for name, known in entries.items():
        path = workdir / name
        if path.is_symlink() or not path.exists():
            continue
        carrier = time_carrier(path)
        if carrier.stat().st_mtime_ns == known.get("ns"):
            continue  # changed_in_place looks at these
        same_size = path.is_dir() or path.stat().st_size == known.get("size")
        digest = content_digest(path) if same_size else None  # another size: other contents, no digest needed here
        if digest != known.get("digest"):
            # new contents with a new time: what reads it reruns on them, as this plan takes them
            entries[name] = entry(path, {"listing": listing(path), "digest": digest} if digest else None)
            taken += 1
            continue
        os.utime(carrier, ns=(known["ns"], known["ns"]))
        entries[name] = {**known, "listing": listing(path)}
        restored += 1
    if restored or taken:
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
