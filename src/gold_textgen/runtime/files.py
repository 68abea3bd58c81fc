"""File helpers: every output is written to a temporary sibling and renamed into place, so a crash
never leaves a half-written file that looks finished.

The temporary files are private while they are written (mkstemp: 0600, mkdtemp: 0700) and get the modes
an ordinary `open` or `mkdir` would give them (0666 / 0777 less the umask) just before the rename, and so
does everything written inside a temporary directory (safetensors writes model weights 0600): on a
shared filesystem a lab-mate or a web server reads the tables, models and figures as it reads any other
file of the user's. A job killed mid-write leaves its temporary sibling behind; the next write of the same
output removes it (one job writes an output at a time: Snakemake and the trainer lock see to that)."""

from __future__ import annotations

import contextlib
import glob
import hashlib
import html
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any


def current_umask() -> int:
    """The process's umask. Linux shows it in /proc; elsewhere it can only be read by setting it, which is
    done and undone at once."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def remove_stale_temporaries(path: Path) -> None:
    """Remove the temporary siblings (`.{name}.*.tmp`) an earlier, killed write of `path` left behind."""
    for stale in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()


def give_umask_modes(folder: Path) -> None:
    """Every file and folder below `folder` gets the mode `open` / `mkdir` would give it under the umask."""
    mask = current_umask()
    for root, folders, files in os.walk(folder):
        for name in folders:
            os.chmod(Path(root) / name, 0o777 & ~mask)
        for name in files:
            if not (Path(root) / name).is_symlink():
                os.chmod(Path(root) / name, 0o666 & ~mask)
    os.chmod(folder, 0o777 & ~mask)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file next to `path`; on success rename it onto `path`, on error delete it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        with open(tmp_name, mode, encoding=None if "b" in mode else encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, 0o666 & ~current_umask())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp_name)
        raise


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike) -> Iterator[Path]:
    """Yield an empty temporary directory that replaces `path` once the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        yield tmp
        give_umask_modes(tmp)
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_json(path: str | os.PathLike, payload: Any) -> None:
    with atomic_open(path) as handle:
        json.dump(payload, handle, indent=2, sort_keys=True)
        handle.write("\n")


def read_json(path: str | os.PathLike) -> Any:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_open(path) as handle:
        handle.write(text)


def write_csv(path: str | os.PathLike, frame: Any, **to_csv) -> None:
    """A pandas DataFrame as CSV without its index; `to_csv` options (float_format, quoting) pass through."""
    with atomic_open(path) as handle:
        frame.to_csv(handle, index=False, **to_csv)


def write_jsonl(path: str | os.PathLike, rows: Iterable[dict]) -> int:
    count = 0
    with atomic_open(path) as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    return count


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def file_digest(path: str | os.PathLike, algorithm: str = "sha256") -> str:
    """Hex digest of a file, read in chunks."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def content_digest(path: str | os.PathLike) -> str:
    """sha256 of a file, or of a directory's files (relative names and contents, in name order), so two
    copies of the same content agree wherever they lie."""
    path = Path(path)
    if path.is_file():
        return file_digest(path)
    digest = hashlib.sha256()
    for member in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(f"{member.relative_to(path).as_posix()}\0{file_digest(member)}\n".encode())
    return digest.hexdigest()


HTML_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 1.5em; color: #1e293b; }}
table {{ border-collapse: collapse; font-size: 0.85em; }}
th, td {{ border-bottom: 1px solid #cbd5e1; padding: 0.3em 0.7em; text-align: right; max-width: 40em; vertical-align: top; }}
th {{ background: #f1f5f9; position: sticky; top: 0; }}
td:nth-child(-n+{labels}), th:nth-child(-n+{labels}) {{ text-align: left; }}
p.note {{ font-size: 0.85em; color: #475569; white-space: pre-line; }}
</style></head><body>
<h3>{title}</h3>
{table}
<p class="note">{note}</p>
</body></html>
"""


def write_html_table(path: str | os.PathLike, frame: Any, title: str, note: str = "", labels: int = 1) -> None:
    """A table as a self-contained HTML page (the HTML report shows HTML inline; a CSV it only offers for
    download). Numbers with two decimals, empty cells as `-`; `labels` leading columns align left."""
    table = frame.to_html(index=False, border=0, na_rep="-", float_format=lambda value: f"{value:.2f}")
    page = HTML_PAGE.format(title=html.escape(title), table=table, note=html.escape(note), labels=labels)
    write_text(path, page)
