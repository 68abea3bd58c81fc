"""The documentation pages generated from the project's own facts (the config schema, the objectives
catalog, the claims registry), and the code map in the development page (the package's own files), written
by one command so that none goes stale:

    python -m gold_textgen.docs_pages.generated_pages        (from the project's root; `make docs` runs it)

tests/test_docs.py fails on a page that differs from what this writes, naming the command."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from . import claims_reference, code_map, config_reference, objectives_reference

COMMAND = "python -m gold_textgen.docs_pages.generated_pages"
PAGES: dict[str, Callable[[], str]] = {
    "docs/reference/config.md": config_reference.markdown,
    "docs/reference/objectives.md": objectives_reference.markdown,
    "docs/reference/claims.md": claims_reference.markdown,
}
# Pages of prose with a generated block in them: the page's text in, the text with the block written anew out.
BLOCKS: dict[str, Callable[[str], str]] = {code_map.PAGE: code_map.with_code_map}


def generated(root: Path, page: str) -> str:
    """What the generator writes for `page` (a block's page: from the page's text under `root`)."""
    if page in BLOCKS:
        return BLOCKS[page]((root / page).read_text(encoding="utf-8"))
    return PAGES[page]()


def stale_pages(root: Path) -> list[str]:
    """The generated pages under `root` whose text is not what their generator writes now."""
    pages = [*PAGES, *BLOCKS]
    return [page for page in pages if not (root / page).is_file() or (root / page).read_text(encoding="utf-8") != generated(root, page)]


def write_pages(root: Path) -> None:
    for page in [*PAGES, *BLOCKS]:
        (root / page).write_text(generated(root, page), encoding="utf-8")


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
    write_pages(root)
    print(f"wrote {', '.join([*PAGES, *BLOCKS])}")
