"""The experiments of one results folder: each records how it was last run (results/<name>/experiment.json,
written when a run starts and again when it succeeds), and results/index.md and index.html list them all,
one line each: name, config files and their digest, when it last finished, whether it is still current,
and links to its tables, figures and report.

A folder belongs to the settings it was last run with (the record's `settings_digest`: what every layer
sets, merged, whatever their order; the schema's defaults are left out, so a default added to the schema
changes no folder's owner). Once it holds models, a run of any target under other settings
(another file of the same name, an overlay added anywhere, an edited file, a --set) is refused before it plans
anything, naming the keys that differ, unless it says it replaces them (GOLD_TEXTGEN_REPLACE, `gold-textgen
run --replace`): the record is only ever written by a run that was allowed.

"Current" is judged from what the record holds, cheaply: the config files still exist with the digest
they had, and the workflow's code is the code the run used. A full check of every file is
`snakemake --summary` with the experiment's config files."""

from __future__ import annotations

import hashlib
import html
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path

from ..config.layers import merge_layers, name_sources
from ..runtime.errors import ConfigError
from ..runtime.files import content_digest, write_json, write_text

RECORD = "experiment.json"
CLAIMS_TABLE = "tables/claims.csv"


def config_digest(configfiles: Sequence[str | Path]) -> str | None:
    """sha256 over the config files' names and contents, in order (None if one is missing)."""
    digest = hashlib.sha256()
    for path in configfiles:
        path = Path(path)
        if not path.is_file():
            return None
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


REPLACE_VARIABLE = "GOLD_TEXTGEN_REPLACE"


def source_labels(sources: Sequence[str], project: Path) -> list[str]:
    """The config files an experiment's folder belongs to (layers.name_sources), each relative to the project
    (else to the working folder, else absolute), so a fresh clone with the results copied in names them alike."""
    labels = []
    for where in sources:
        if where.startswith("--"):
            labels.append(where)
            continue
        path = Path(where).resolve()
        for root in (project.resolve(), Path.cwd().resolve()):
            if path.is_relative_to(root):
                labels.append(str(path.relative_to(root)))
                break
        else:
            labels.append(str(path))
    return labels


def read_record(results_dir: str | Path) -> dict | None:
    """The folder's record, or None where it has none; a record that is not the JSON object a run wrote is
    a ConfigError naming it (the guard and the claims check read it: a damaged one must not pass as none)."""
    path = Path(results_dir) / RECORD
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        problem = None if isinstance(record, dict) else f"a JSON {type(record).__name__}"
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        problem = str(error)
    if problem:
        raise ConfigError(
            f"{path}: not the record a run of the workflow writes ({problem}); "
            "restore it from a copy, or delete it and run the experiment's config again"
        )
    return record


# Settings that cannot change a result: the cost model only plans (a profile, the expected updates).
NOT_SETTINGS = ("cost",)


def owned_settings(config: dict) -> dict:
    """The settings a folder's results depend on: the merged layers less NOT_SETTINGS, as the record
    reads them back (a JSON copy: later changes to `config` do not reach it, tuples compare as lists)."""
    return json.loads(json.dumps({key: value for key, value in config.items() if key not in NOT_SETTINGS}, default=str))


def settings_digest(settings: dict) -> str:
    """sha256 of the settings as canonical JSON: equal settings give one digest, whatever the layers' order."""
    text = json.dumps(settings, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def differing_keys(before: object, after: object, prefix: str = "") -> list[tuple[str, object, object]]:
    """(dotted key, value before, value after) for every leaf where the two settings differ."""
    missing = "(not set)"
    if isinstance(before, dict) and isinstance(after, dict):
        found = []
        for key in sorted(set(before) | set(after), key=str):
            found += differing_keys(before.get(key, missing), after.get(key, missing), f"{prefix}{key}.")
        return found
    return [] if before == after else [(prefix.rstrip("."), before, after)]


# Snakemake runs that only read the folder (or release its lock): never refused, they change nothing of it.
READING_FLAGS = ("--unlock", "--report", "--summary", "-S", "--detailed-summary", "-D", "--list-changes", "--lc")


def only_reads(argv: Sequence[str]) -> bool:
    """Whether these driver arguments only read the folder (`--report-after-run` runs first)."""
    flags = {argument.split("=", 1)[0] for argument in argv}
    return "--report-after-run" not in flags and bool(flags & set(READING_FLAGS))


def ownership_problem(results_dir: str | Path, name: str, sources: Sequence[str], settings: dict, holds_models: bool) -> str | None:
    """Why a run must not start (None: it may): the experiment's folder holds models made under other
    settings than this run's (the record's digest; a record written before digests were kept is judged
    by its config files). Setting the environment variable GOLD_TEXTGEN_REPLACE to the experiment's name
    lets it."""
    record = read_record(results_dir)
    if not holds_models or record is None or os.environ.get(REPLACE_VARIABLE) == name:
        return None
    recorded = " + ".join(record.get("sources") or ["unknown files"])
    if "settings_digest" in record:
        if record["settings_digest"] == settings_digest(settings):
            return None
        changes = differing_keys(record.get("settings", {}), settings)
        shown = "; ".join(f"{key}: {before!r} -> {after!r}" for key, before, after in changes[:6])
        more = f" and {len(changes) - 6} more" if len(changes) > 6 else ""
        what = f"settings differ from those its models were made with ({shown}{more})"
    elif list(record.get("sources") or []) != list(sources):
        what = "config files differ from those its models were made with"
    else:
        return None
    return (
        f"results/{name}/ belongs to the experiment made by {recorded}; this run's ({' + '.join(sources)}) {what}. "
        f"Give this config an experiment.name of its own (a folder of its own), or, to run these settings on "
        f"the folder's models (Snakemake reruns only what they change, retraining models in place where they "
        f"change training), run again with {REPLACE_VARIABLE}={name} (gold-textgen run --replace)"
    )


def base_ownership_problem(store: str | Path, base: str, layers: Sequence[tuple[str, dict]], project: Path) -> str | None:
    """Why an extension of `base` must not run (None: it may): the layers that rebuild `base` in this run
    (`layers`: its config files up to the last that names it) are not the settings its folder `store`'s
    models were made with, so the extension would retrain them in place. GOLD_TEXTGEN_REPLACE=<base> lets it,
    as for the base's own run."""
    if not any(path.is_file() for path in Path(store, "models").rglob("*")):
        return None
    _, sources = name_sources(layers)
    problem = ownership_problem(store, base, source_labels(sources, project), owned_settings(merge_layers(layers)), holds_models=True)
    if problem is None:
        return None
    return (
        f"this run extends the experiment '{base}', whose models it writes in their folder, and its config files rebuild "
        f"'{base}' otherwise than that folder's models were made. {problem}"
    )


def file_digests(configfiles: Sequence[str | Path]) -> dict[str, str | None]:
    """Each config file's own digest (None: missing), by its absolute path."""
    return {str(Path(path).resolve()): config_digest([path]) for path in configfiles}


def record_run(
    results_dir: str | Path,
    name: str,
    extends: str | None,
    sources: Sequence[str],
    configfiles: Sequence[str | Path],
    code: str,
    complete: bool | None,
    settings: dict | None = None,
    read_as: dict[str, str | None] | None = None,
) -> dict:
    """Write results/<name>/experiment.json and return it: `complete` None when a run starts (its results
    may change until it ends), else whether it built every default target (Snakefile `all`); `settings`
    (owned_settings) make the folder's owner. `read_as` (file_digests when the run read its config): the
    record's config digest is the one the run started with, and a file edited since is named in
    `config_edited_during_run`."""
    files = [str(Path(path).resolve()) for path in configfiles]
    previous = read_record(results_dir) or {}
    now = file_digests(files)
    started = read_as or now
    edited = [file for file in files if started.get(file) != now.get(file)]
    record = {
        "name": name,
        "extends": extends,
        "sources": list(sources),
        "config_files": files,
        "config_digest": config_digest(files) if not edited else _digest_as_read(files, started),
        "config_edited_during_run": edited,
        # the claims table this run left, which `gold-textgen signatures` reads only if it is still this one
        "claims_digest": content_digest(claims) if (claims := Path(results_dir) / CLAIMS_TABLE).is_file() else None,
        **({"settings_digest": settings_digest(settings), "settings": settings} if settings is not None else {}),
        "code_version": code,
        "started": previous.get("started") if complete is not None else time.strftime("%Y-%m-%d %H:%M:%S"),
        "finished": time.strftime("%Y-%m-%d %H:%M:%S") if complete is not None else None,
        "complete": bool(complete),
    }
    write_json(Path(results_dir) / RECORD, record)
    return record


def _digest_as_read(files: Sequence[str], digests: dict[str, str | None]) -> str:
    """The config digest of files as they were read (their own digests, in order): it equals none that
    config_digest gives for the files now, so the record reads "config changed since"."""
    return hashlib.sha256("\0".join(f"{file}={digests.get(file)}" for file in files).encode()).hexdigest()[:16]


def status(record: dict, code: str) -> str:
    """Whether an experiment's results are current, as far as its record tells: `gold-textgen status` with
    its config files runs Snakemake's dry run, and a record says "current" only where that plans nothing
    (every default target built by one run, and neither config nor code changed since)."""
    if record.get("finished") is None:
        return "running, or stopped before it finished"
    if record.get("config_edited_during_run"):
        edited = ", ".join(Path(file).name for file in record["config_edited_during_run"])
        return f"config edited while its run went ({edited}): its results are of the config as the run read it"
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
        finished = row["finished"] or "-"
        configs = ", ".join(Path(path).name for path in row["config_files"]) + f" ({row['config_digest']})"
        base = f" (extends {row['extends']})" if row.get("extends") else ""
        links = " ".join(f"[{label}]({target})" for label, target in row["links"]) or "none yet"
        lines.append(f"| {row['name']}{base} | {configs} | {finished} | {row['status']} | {links} |")
        html_links = " ".join(f'<a href="{html.escape(target)}">{html.escape(label)}</a>' for label, target in row["links"])
        cells.append(
            [html.escape(row["name"] + base), html.escape(configs), finished, html.escape(row["status"]), html_links or "none yet"]
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
