"""The code map of docs/development.md: each sub-package of gold_textgen, its floor, its size and what it
holds (the first paragraph of its `__init__.py` docstring), generated so that the map moves with the code.

Imports go to lower floors only, and sub-packages on one floor never import each other
(tests/test_imports.py checks every import against `FLOORS`)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
PAGE = "docs/development.md"
# The floor of each sub-package: the catalog and the run-time support on the ground floor, the command on top.
FLOORS = {
    "catalog": 0,
    "runtime": 0,
    "config": 1,
    "checkpoints": 1,
    "claims": 2,
    "bookkeeping": 2,
    "cost": 3,
    "models": 3,
    "objectives": 3,
    "docs_pages": 3,
    "model_exchange": 4,
    "data": 5,
    "evaluation": 6,
    "training": 7,
    "analysis": 7,
    "comparisons": 8,
    "sft": 8,
    "cli": 9,
}
BEGIN = "<!-- code-map: written by python -m gold_textgen.docs_pages.generated_pages -->"
END = "<!-- /code-map -->"


def line_count(path: Path) -> int:
    """What `wc -l` says of a file: its newline characters."""
    return path.read_bytes().count(b"\n")


def hundreds(lines: int) -> str:
    """A line count to the nearest hundred: the map changes when a room grows, not with every edit."""
    return f"{round(lines, -2):,}"


def holds(sub_package: Path) -> str:
    """The first paragraph of a sub-package's docstring, on one line."""
    docstring = ast.get_docstring(ast.parse((sub_package / "__init__.py").read_text(encoding="utf-8"))) or ""
    return " ".join(docstring.split("\n\n")[0].split())


def table(package: Path = PACKAGE) -> str:
    """The rooms from the top floor down: floor, sub-package, its Python files and their lines."""
    sizes = {name: [line_count(path) for path in sorted((package / name).rglob("*.py"))] for name in FLOORS}
    total = sum(sum(lines) for lines in sizes.values())
    rows = []
    for name in sorted(FLOORS, key=lambda name: (-FLOORS[name], name)):
        lines = sum(sizes[name])
        size = f"{len(sizes[name])} | {hundreds(lines)} | {lines / total:.0%}"
        rows.append(f"| {FLOORS[name]} | `{name}/` | {size} | {holds(package / name)} |")
    return "\n".join(
        [
            BEGIN,
            "| floor | sub-package | files | lines (`wc -l`, to the hundred) | share | holds |",
            "|---|---|---|---|---|---|",
            *rows,
            f"| | every sub-package | {sum(len(files) for files in sizes.values())} | {hundreds(total)} | | |",
            END,
        ]
    )


def with_code_map(text: str, package: Path = PACKAGE) -> str:
    """`text` (the development page) with its code-map block written anew."""
    block = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if not block.search(text):
        raise ValueError(f"{PAGE} has no code-map block ({BEGIN} ... {END})")
    return block.sub(lambda _: table(package), text)
