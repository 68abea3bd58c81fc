"""Results pages quote recorded runs (benchmarks/results_page.py): every generated block holds its file's
text, and no figure of the page is missing from the files its blocks come from."""

import pytest
from conftest import REPO

from benchmarks import results_page

# The results pages whose every number comes from recorded runs.
RESULTS_PAGES = ["docs/results/demo.md", "docs/results/objectives.md"]
# The results pages not yet bound that way, and why: each states figures typed from runs made before the
# record existed (or, for standard-models.md, the models' and data's own facts, which tests pin), and goes
# into RESULTS_PAGES once its runs are recorded by `python -m benchmarks.claims --record`.
NOT_YET_BOUND = {
    "docs/results/standard-models.md": "its verdicts are recorded; the models' sizes, source lines and data statistics are typed",
    "docs/results/on-policy.md": "typed from runs made before the record existed",
    "docs/results/decoder-only.md": "typed from runs made before the record existed",
}


def test_every_results_page_is_bound_to_its_record_or_listed_with_its_reason():
    pages = {f"docs/results/{path.name}" for path in (REPO / "docs" / "results").glob("*.md")}
    assert pages == set(RESULTS_PAGES) | set(NOT_YET_BOUND) and not set(RESULTS_PAGES) & set(NOT_YET_BOUND)


@pytest.mark.parametrize("page", RESULTS_PAGES + [page for page in NOT_YET_BOUND if results_page.blocks(REPO / page)])
def test_a_results_pages_generated_blocks_hold_their_files_text(page):
    path = REPO / page
    assert path.read_text() == results_page.render(path), f"{page} is stale: python -m benchmarks.results_page {page}"


@pytest.mark.parametrize("page", RESULTS_PAGES)
def test_a_results_page_states_no_number_its_record_does_not_hold(page):
    assert results_page.unheld_figures(REPO / page) == [], f"{page} states figures no recorded run file holds"


def test_every_kind_of_number_outside_code_and_names_is_a_figure():
    """Decimals (a sentence's last too), integers and percents are figures; numbers inside names (beam5,
    BLEU-2, top-k20, a path, an anchor) and inside code are not."""
    text = "BLEU rose 0.49. Over 3 seeds, 35% of runs, 1,200 updates; beam5, BLEU-2, runs/seed1, #claims-2 and `--cores 2`."
    assert results_page.figures(text) == {"0.49", "3", "35%", "1200"}


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
    # an integer and a sentence's last decimal are figures too; a percent is held by its share
    (tmp_path / "runs" / "config.yaml").write_text("noise: 0.35\n")
    page.write_text(page.read_text() + "\n35% of references are noisy, over 7 seeds; GOLD-s reached 48.61.\n")
    assert results_page.unheld_figures(page) == ["48.61", "7"]
