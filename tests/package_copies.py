"""Copies of the package with one edit, for the tests of what an edit to the code reruns."""

from __future__ import annotations

import shutil
from pathlib import Path

from gold_textgen.bookkeeping.code_identity import package_root


def package_copy(tmp_path: Path, module: str, old: str, new: str) -> Path:
    """A copy of the package (tmp_path/src/gold_textgen) with one edit of `module`."""
    root = tmp_path / "src" / "gold_textgen"
    shutil.copytree(package_root(), root, ignore=shutil.ignore_patterns("__pycache__"))
    text = (root / module).read_text()
    assert old in text, f"{old!r} is not in {module}"
    (root / module).write_text(text.replace(old, new, 1))
    return root


def edited_package(tmp_path: Path, module: str, old: str, new: str) -> dict[str, str]:
    """A copy of the package with one edit, and the environment that makes Snakemake and its jobs import it."""
    return {"PYTHONPATH": str(package_copy(tmp_path, module, old, new).parent)}
