"""The benchmarks' blocks in docs pages (benchmarks/page_blocks.py): what `--record` writes and where, on
known answers, and the reference-NQG benchmark's block text (benchmarks/reference_nqg.py)."""

from __future__ import annotations

from argparse import Namespace

import pytest

from benchmarks.page_blocks import markers, rewrite_block
from benchmarks.reference_nqg import recorded_text

BEGIN, END = markers("step-time", "python -m benchmarks.step_time")


def test_the_markers_name_the_block_and_the_command_that_writes_it():
    assert (BEGIN, END) == ("<!-- step-time: written by python -m benchmarks.step_time -->", "<!-- /step-time -->")


def test_rewriting_a_block_replaces_only_what_lies_between_its_markers(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(f"before\n{BEGIN}\nold table\nold line\n{END}\nafter\n")
    rewrite_block(page, BEGIN, END, "new table")
    assert page.read_text() == f"before\n{BEGIN}\nnew table\n{END}\nafter\n"


@pytest.mark.parametrize("content", ["no block here\n", f"{BEGIN}\nunclosed\n", f"{END}\n{BEGIN}\n", f"{BEGIN}\n{END}\n{BEGIN}\n{END}\n"])
def test_a_page_without_exactly_one_block_is_named_and_left_as_it_was(tmp_path, content):
    page = tmp_path / "page.md"
    page.write_text(content)
    with pytest.raises(SystemExit, match=r"page\.md: no block to write"):
        rewrite_block(page, BEGIN, END, "new table")
    assert page.read_text() == content


def test_the_reference_nqg_block_says_where_and_how_its_table_was_measured():
    args = Namespace(shapes=["nqg", "nqg_real"], threads=[1, 2], steps=5, warmup=2)
    text = recorded_text(["| row one |", "| row two |"], args, "abc1234", "AMD EPYC, 2 cores")
    command = "python -m benchmarks.reference_nqg --reference <FocusSeq2Seq checkout> --shapes nqg nqg_real"
    command += " --threads 1 2 --steps 5 --warmup 2"
    lines = text.splitlines()
    assert lines[0] == f"Commit abc1234, AMD EPYC, 2 cores, `{command}`: the median of 5 steps after 2, the faster of two rounds."
    assert lines[1] == "" and lines[2].startswith("| model (shape: batch x source words -> question words) |")
    assert lines[3] == "|---" * 7 + "|" and lines[4:] == ["| row one |", "| row two |"]
