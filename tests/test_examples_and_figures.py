import pandas as pd
import pytest

from gold_textgen.analysis import figures
from gold_textgen.analysis.examples import aligned_outputs, sample_rows, write_examples
from gold_textgen.analysis.exposure_bias import bleu_by_length, length_bin_edges
from gold_textgen.analysis.nll_analysis import by_time_step

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def outputs(name, ids):
    return [{"id": i, "source": f"src {i}", "reference": f"ref {i}", "hypothesis": f"{name} {i}"} for i in ids]


def test_examples_are_a_fixed_sample_with_every_system(tmp_path):
    generations = {"MLE": outputs("m", range(50)), "GOLD-s": outputs("g", range(50))}
    sample = write_examples(generations, 5, seed=3, csv_path=tmp_path / "e.csv", markdown_path=tmp_path / "e.md")
    again = sample_rows(aligned_outputs(generations), 5, seed=3)
    assert sample.equals(again) and len(sample) == 5
    assert sample["id"].is_monotonic_increasing
    assert all(row["MLE"] == f"m {row['id']}" and row["GOLD-s"] == f"g {row['id']}" for _, row in sample.iterrows())
    text = (tmp_path / "e.md").read_text()
    assert text.count("| input |") == 5 and "| GOLD-s | g " in text and "| reference | ref " in text


def test_systems_must_cover_the_same_examples():
    with pytest.raises(ValueError, match="outputs of B do not cover the same examples"):
        aligned_outputs({"A": outputs("a", [1, 2]), "B": outputs("b", [2, 1])})


@pytest.fixture
def nll_tables():
    rows = [(e, p, 0.02 * (p + 1) * (e % 5), (e + p) % 4 != 0) for e in range(60) for p in range(8)]
    frame = pd.DataFrame(rows, columns=["example", "position", "nll", "correct"])
    return {"mle": frame, "gold_s": frame.assign(nll=frame["nll"] * 2)}


def test_figures_are_written_as_png(tmp_path, nll_tables):
    figures.nll_histogram(nll_tables, tmp_path / "hist.png")
    figures.nll_by_time_step(by_time_step(nll_tables, resamples=100), tmp_path / "steps.png", 0.95)
    generations = [{"hypothesis": " ".join(["a"] * n), "reference": " ".join(["a"] * 6)} for n in range(2, 12)] * 3
    stats = bleu_by_length(generations, length_bin_edges(range(2, 12), 3), min_count=2, resamples=100).assign(objective="mle")
    figures.exposure_bias(stats, tmp_path / "bias.png", 0.95)
    for name in ("hist.png", "steps.png", "bias.png"):
        data = (tmp_path / name).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 10_000
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_test_set_too_small_for_any_time_step_still_gets_its_figures(tmp_path, nll_tables):
    """Fewer references than a time step's minimum count (a user's 16-example test set): every step is left
    out, and the figures say so instead of failing the run."""
    few = {name: table[table["example"] < 5] for name, table in nll_tables.items()}
    figures.nll_by_time_step(by_time_step(few, resamples=100), tmp_path / "steps.png", 0.95)
    assert (tmp_path / "steps.png").read_bytes().startswith(PNG_MAGIC)
