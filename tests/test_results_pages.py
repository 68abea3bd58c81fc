"""Results pages quote recorded runs (benchmarks/results_page.py): every generated block holds its file's
text, and no figure of the page is missing from the files its blocks come from."""

import pytest
from conftest import REPO

from benchmarks import results_page

# The results pages whose verdicts and figures come from recorded runs (standard-models.md: none recorded
# yet, so it may state no figure at all).
RESULTS_PAGES = ["docs/results/demo.md", "docs/results/standard-models.md"]


@pytest.mark.parametrize("page", RESULTS_PAGES)
def test_a_results_page_quotes_its_recorded_runs_and_states_no_other_figure(page):
    path = REPO / page
    assert path.read_text() == results_page.render(path), f"{page} is stale: python -m benchmarks.results_page {page}"
    assert results_page.unheld_figures(path) == [], f"{page} states figures no recorded run file holds"


def test_the_demo_page_has_its_verdicts_from_a_recorded_run():
    assert [source.name for source in results_page.blocks(REPO / "docs/results/demo.md")][:2] == ["verdicts.md", "withdrawn.md"]


def test_a_figure_typed_by_hand_is_found_and_a_block_is_filled_from_its_file(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "table.md").write_text("| bleu |\n| 48.58 |\n")
    page = tmp_path / "page.md"
    page.write_text("GOLD-s gained +0.49 BLEU.\n\n<!-- generated from runs/table.md -->\nold\n<!-- end of generated block -->\n")
    assert results_page.unheld_figures(page) == ["0.49"]
    results_page.write(page)
    assert "| 48.58 |\n<!-- end of generated block -->" in page.read_text() and "old" not in page.read_text()
    page.write_text(page.read_text().replace("+0.49 BLEU", "48.58 BLEU"))
    assert results_page.unheld_figures(page) == []
