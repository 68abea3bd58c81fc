"""Results pages whose figures come from a run's files, never typed by hand.

A page (docs/results/*.md) holds generated blocks, each naming the file it is copied from, relative to
the page (a run's record, written by `python -m benchmarks.claims --record ...`):

    <!-- generated from ../runs/demo/verdicts.md -->
    ...the file's text...
    <!-- end of generated block -->

    python -m benchmarks.results_page docs/results/demo.md   # copy every block's file in again

`unheld_figures` lists the figures of a page that none of its record's files holds: every number outside
code (decimals, integers, percents, one that ends a sentence too; a percent is held as itself or as a
share, 35% by 0.35); the docs test fails on any. Numbers inside names (beam5, BLEU-2, a commit) are no
figures.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

BLOCK = re.compile(r"(<!-- generated from (?P<source>\S+) -->\n)(?P<body>.*?)(<!-- end of generated block -->)", re.S)
# A number standing alone: not inside a name (beam5, BLEU-2, a path or an anchor), a sentence's full stop
# after it allowed.
FIGURE = re.compile(r"(?<![\w.\-/#])[-+]?\d[\d,]*(?:\.\d+)?%?(?![\w/]|\.\d)")
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)


def blocks(page: Path) -> list[Path]:
    """The files a page's generated blocks are copied from."""
    return [page.parent / match["source"] for match in BLOCK.finditer(page.read_text())]


def render(page: Path) -> str:
    """The page with every generated block holding its file's text again."""
    return BLOCK.sub(lambda match: match[1] + (page.parent / match["source"]).read_text().rstrip("\n") + "\n" + match[4], page.read_text())


def write(page: Path, record: Path | None = None) -> None:
    """Regenerate `page` in place (`record`: the folder its blocks should come from, checked)."""
    sources = blocks(page)
    if record is not None and not any(source.resolve().parent == record.resolve() for source in sources):
        raise SystemExit(f"{page} has no generated block from {record}")
    page.write_text(render(page))


def figures(text: str) -> set[str]:
    """The numbers of `text` outside code, as written (sign and thousands separators dropped)."""
    return {match.lstrip("+-").replace(",", "") for match in FIGURE.findall(CODE.sub(" ", text))}


def _held_as(figure: str) -> set[str]:
    """The numbers a record may hold `figure` as: itself, and a percent also as its share (35% as 0.35)."""
    if not figure.endswith("%"):
        return {figure}
    number = figure[:-1]
    return {number, f"{float(number) / 100:g}"}


def unheld_figures(page: Path) -> list[str]:
    """The figures of `page` outside its generated blocks that no file of the record folders its blocks
    come from holds (a record's files as text, code included)."""
    folders = {source.parent for source in blocks(page)}
    held = set()
    for path in (path for folder in folders for path in folder.iterdir() if path.is_file()):
        numbers = {match.lstrip("+-").replace(",", "") for match in FIGURE.findall(path.read_text())}
        held |= numbers | {f"{float(number.rstrip('%')):g}" for number in numbers}
    outside = BLOCK.sub("", page.read_text())
    return sorted(figure for figure in figures(outside) if not _held_as(figure) & held)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="+", type=Path)
    args = parser.parse_args(argv)
    for page in args.pages:
        write(page)


if __name__ == "__main__":
    main()
