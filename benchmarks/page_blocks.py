"""A benchmark's block in a docs page: the text between two HTML comments that the benchmark writes, so that
the page quotes its figures as the script measured them (`--record <page>`), never as typed by hand."""

from __future__ import annotations

from pathlib import Path


def markers(name: str, command: str) -> tuple[str, str]:
    """The comments that open and close the block of `name`, written by `command`."""
    return f"<!-- {name}: written by {command} -->", f"<!-- /{name} -->"


def rewrite_block(page: Path, begin: str, end: str, body: str) -> None:
    """Replace what lies between `begin` and `end` in `page` (the markers kept) with `body`; the page must
    hold both markers, in that order, once each."""
    content = page.read_text()
    if content.count(begin) != 1 or content.count(end) != 1 or content.index(begin) > content.index(end):
        raise SystemExit(f"{page}: no block to write (one {begin} followed by one {end})")
    start, stop = content.index(begin), content.index(end) + len(end)
    page.write_text(content[:start] + "\n".join([begin, body, end]) + content[stop:])
