"""What produced a result: the code revision, library versions and the resolved settings."""

from __future__ import annotations

import platform
import subprocess
from importlib import metadata
from pathlib import Path

TRACKED_PACKAGES = ("gold-textgen", "torch", "transformers", "accelerate", "datasets", "tokenizers", "sacrebleu", "rouge-score")


def git_revision(repo_dir: str | Path) -> str:
    """`<commit>` or `<commit>-dirty`; `unknown` outside a git checkout."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(repo_dir), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(repo_dir), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{commit}-dirty" if dirty else commit


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def provenance(repo_dir: str | Path, code_version: str | None = None, **facts) -> dict:
    """The git revision of the checkout (with `git_dirty`: uncommitted changes to tracked files), the
    library versions, and `code_version`: the digest of the package code this job ran
    (bookkeeping/code_identity.py), which the workflow compares with the current code."""
    revision = git_revision(repo_dir)
    return {
        "git_revision": revision,
        "git_dirty": revision.endswith("-dirty"),
        "code_version": code_version,
        "versions": package_versions(),
        **facts,
    }
