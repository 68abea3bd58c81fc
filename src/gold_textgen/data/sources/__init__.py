"""Where each task's data comes from: one reader per source kind, all returning contract records per split.

* `synthetic`: the embedded demo language (demo_task.py);
* `local`: the user's own files (data.py);
* `huggingface`: a hub dataset at a pinned revision (CNN/DailyMail, XSum);
* `gsm8k`: GSM8K from the hub, prompts and worked solutions, a dev split carved from train;
* `nqg_zhou2017`: Zhou et al.'s question-generation release (a downloaded zip);
* `iwslt14_fairseq`: the IWSLT14 De-En archive, prepared as fairseq's script does.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..demo_task import DemoTaskSpec, build_lexicon, generate_split
from ..records import SPLITS, load_local_split
from . import gsm8k, hub, iwslt14, nqg

ARCHIVE_KINDS = {"nqg_zhou2017": nqg.load_splits, "iwslt14_fairseq": iwslt14.load_splits}
HUB_KIND = "huggingface"
HUB_KINDS = {HUB_KIND: hub.load_splits, "gsm8k": gsm8k.load_splits}


def needs_download(source: dict) -> bool:
    """Sources read from an archive that the workflow downloads first (rule download_source); a source
    that names a `directory` of the release's files reads them in place."""
    return source["kind"] in ARCHIVE_KINDS and not source.get("directory")


def reads_hub(source: dict) -> bool:
    """Sources that `prepare_dataset` reads from the dataset hub (it needs the internet, or the cache)."""
    return source["kind"] in HUB_KINDS


def local_source_files(source: dict, splits: tuple[str, ...] = SPLITS) -> list[str]:
    """The files a `local` source (its `splits`) or a source `directory` reads (none for the other kinds), so
    that editing them rebuilds the data."""
    if source.get("directory"):
        return sorted(str(p) for p in Path(source["directory"]).rglob("*") if p.is_file())
    if source["kind"] != "local":
        return []
    if source["format"] != "parallel":
        return [source[split] for split in splits]
    return [f"{source[split]}{suffix}" for split in splits for suffix in source["suffixes"]]


def source_files_digest(files: list[str]) -> str:
    """sha256 over the names and contents of a source's files: the workflow reruns the data preparation when
    this changes, not when a copy, a restore or a re-mounted share only gives the files new times."""
    digest = hashlib.sha256()
    for name in files:
        digest.update(name.encode() + b"\0")
        if not Path(name).is_file():
            continue  # Snakemake's missing-input error names it
        with open(name, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def load_source_splits(
    source: dict, splits: list[str], base_dir: str | Path = ".", archive: str | Path | None = None
) -> dict[str, list[dict]]:
    kind = source["kind"]
    if kind == "synthetic":
        # The training splits' settings lack `num_test` (config.views.training_source_view): it sizes the
        # test split alone, and each split is drawn from its own stream.
        spec = DemoTaskSpec.from_config({"num_test": 0, **source})
        lexicon = build_lexicon(spec)
        return {split: generate_split(spec, split, lexicon) for split in splits}
    if kind == "local":
        return {split: load_local_split(source, split, base_dir) for split in splits}
    if kind in HUB_KINDS:
        return HUB_KINDS[kind](source, splits)
    if kind in ARCHIVE_KINDS:
        if archive is None and source.get("directory"):
            archive = Path(base_dir) / source["directory"]
            if not archive.is_dir():
                raise FileNotFoundError(f"the {kind} source's directory {archive} does not exist (source.directory in the config)")
        if archive is None:
            raise ValueError(f"a {kind} source is read from its downloaded archive; none was given")
        return ARCHIVE_KINDS[kind](source, splits, archive)
    raise ValueError(f"unknown source kind '{kind}'")
