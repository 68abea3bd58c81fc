"""The experiments of one results folder: each records how it was last run (results/<name>/experiment.json,
written when a run of it succeeds), and results/index.md and index.html list them all, one line each:
name, config files and their digest, when it last finished, whether it is still current, and links to its
tables, figures and report.

"Current" is judged from what the record holds, cheaply: the config files still exist with the digest
they had, and the workflow's code is the code the run used. A full check of every file is
`snakemake --summary` with the experiment's config files."""

from __future__ import annotations

import hashlib
import html
import json
import time
from collections.abc import Sequence
from pathlib import Path

from .files import write_json, write_text

RECORD = "experiment.json"


def config_digest(configfiles: Sequence[str | Path]) -> str | None:
    """sha256 over the config files' names and contents, in order (None if one is missing)."""
    digest = hashlib.sha256()
    for path in configfiles:
        path = Path(path)
        if not path.is_file():
            return None
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def record_run(
    results_dir: str | Path, name: str, extends: str | None, configfiles: Sequence[str | Path], code: str, complete: bool
) -> dict:
    """Write results/<name>/experiment.json for a run that just succeeded; return the record."""
    files = [str(Path(path).resolve()) for path in configfiles]
    record = {
        "name": name,
        "extends": extends,
        "config_files": files,
        "config_digest": config_digest(files),
        "code_version": code,
        "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
        "complete": complete,
    }
    write_json(Path(results_dir) / RECORD, record)
    return record


def status(record: dict, code: str) -> str:
    """Whether an experiment's results are current, as far as its record tells."""
    if not record.get("complete"):
        return "partial (only some targets were built)"
    digest = config_digest(record["config_files"])
    if digest is None:
        return "a config file is gone"
    if digest != record["config_digest"]:
        return "config changed since"
    if record["code_version"] != code:
        return "code changed since"
    return "current"


def _links(folder: Path, root: Path) -> list[tuple[str, str]]:
    """(label, path relative to `root`) of an experiment's tables, figures and report."""
    found = sorted(folder.glob("tables/**/*.md")) + sorted(folder.glob("figures/**/*.png"))
    found += [path for path in (folder / "report.html",) if path.is_file()]
    return [(str(path.relative_to(folder)), str(path.relative_to(root))) for path in found]


def index_rows(root: str | Path, code: str) -> list[dict]:
    root = Path(root)
    rows = []
    for path in sorted(root.glob(f"*/{RECORD}")):
        record = json.loads(path.read_text(encoding="utf-8"))
        rows.append({**record, "status": status(record, code), "links": _links(path.parent, root)})
    return rows


def write_index(root: str | Path, code: str) -> list[dict]:
    """results/index.md and index.html: one entry per experiment recorded under `root`."""
    root = Path(root)
    rows = index_rows(root, code)
    lines = [
        "# Experiments in this folder",
        "",
        "| experiment | config files (digest) | last finished | status | results |",
        "|---|---|---|---|---|",
    ]
    cells = []
    for row in rows:
        configs = ", ".join(Path(path).name for path in row["config_files"]) + f" ({row['config_digest']})"
        base = f" (extends {row['extends']})" if row.get("extends") else ""
        links = " ".join(f"[{label}]({target})" for label, target in row["links"]) or "none yet"
        lines.append(f"| {row['name']}{base} | {configs} | {row['finished']} | {row['status']} | {links} |")
        html_links = " ".join(f'<a href="{html.escape(target)}">{html.escape(label)}</a>' for label, target in row["links"])
        cells.append(
            [html.escape(row["name"] + base), html.escape(configs), row["finished"], html.escape(row["status"]), html_links or "none yet"]
        )
    lines += [
        "",
        "Status from each experiment's record (its config files and the code it was built with); "
        "`snakemake --summary --configfile ...` checks every file.",
    ]
    write_text(root / "index.md", "\n".join(lines) + "\n")
    header = "".join(f"<th>{name}</th>" for name in ("experiment", "config files (digest)", "last finished", "status", "results"))
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in cells)
    write_text(
        root / "index.html",
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Experiments</title></head><body>"
        f"<h1>Experiments in this folder</h1><table border='1'><tr>{header}</tr>{body}</table></body></html>\n",
    )
    return rows
