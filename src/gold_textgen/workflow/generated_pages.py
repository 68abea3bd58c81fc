"""The documentation pages generated from the project's own facts (the config schema, the objectives
catalog, the claims registry), written by one command so that none goes stale:

    python -m gold_textgen.workflow.generated_pages        (from the project's root; `make docs` runs it)

tests/test_docs.py fails on a page that differs from what this writes, naming the command."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from . import claims_reference, config_reference, objectives_reference

COMMAND = "python -m gold_textgen.workflow.generated_pages"
PAGES: dict[str, Callable[[], str]] = {
    "docs/reference/config.md": config_reference.markdown,
    "docs/reference/objectives.md": objectives_reference.markdown,
    "docs/reference/claims.md": claims_reference.markdown,
}


def stale_pages(root: Path) -> list[str]:
    """The generated pages under `root` whose text is not what their generator writes now."""
    return [page for page, generate in PAGES.items() if not (root / page).is_file() or (root / page).read_text() != generate()]


def write_pages(root: Path) -> None:
    for page, generate in PAGES.items():
        (root / page).write_text(generate())


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
    write_pages(root)
    print(f"wrote {', '.join(PAGES)}")
