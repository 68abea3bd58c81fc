"""The objectives comparison and the paper's Table 4 from hand-made score rows."""

import math

import pandas as pd
import pytest

from gold_textgen.comparisons.objectives_table import objectives_figure, objectives_table, to_markdown
from gold_textgen.comparisons.on_policy_table import table4
from gold_textgen.comparisons.on_policy_table import to_markdown as table4_markdown
from gold_textgen.config import views


def score_rows(split: str, decoder: str, values: dict[str, list[float]], samples: int = 1) -> list[dict]:
    """One row per objective, seed and sampling run; run r of seed s scores value + r (runs average to value + (samples-1)/2)."""
    rows = []
    for objective, per_seed in values.items():
        for seed, value in enumerate(per_seed, start=1):
            for sample in range(samples):
                rows.append(
                    {
                        "task": "demo",
                        "objective": objective,
                        "seed": seed,
                        "split": split,
                        "decoder": decoder,
                        "sample": sample,
                        "bleu": value + sample,
                        "perplexity": 2.0 + value / 100,
                        "unk_rate": 0.5,
                    }
                )
    return rows


TEST = pd.DataFrame(score_rows("test", "greedy", {"mle": [40.0, 42.0], "gold_s": [44.0, 44.0], "dft": [41.0, 45.0]}))
SWEEP = pd.DataFrame(
    score_rows("valid", "greedy", {"mle": [40.0, 40.0], "gold_s": [44.0, 44.0], "dft": [41.0, 41.0]})
    + score_rows("valid", "topk20", {"mle": [20.0, 20.0], "gold_s": [39.0, 39.0], "dft": [30.0, 30.0]}, samples=3)
)
DIVERSITY = pd.DataFrame(
    [
        {"system": "reference", "objective": "", "distinct_2": 500},
        {"system": "mle/seed1", "objective": "mle", "distinct_2": 300},
        {"system": "mle/seed2", "objective": "mle", "distinct_2": 340},
        {"system": "gold_s/seed1", "objective": "gold_s", "distinct_2": 200},
    ]
)


def test_each_objective_gets_its_seed_mean_spread_perplexity_sampling_drop_and_diversity():
    table = objectives_table(TEST, SWEEP, {"demo": DIVERSITY}, {"demo": "bleu"}).set_index("objective")
    assert list(table.index) == ["mle", "gold_s", "dft"]  # MLE, GOLD, then the peers
    assert table.loc["mle", "mean"] == 41.0 and math.isclose(table.loc["mle", "seed_std"], math.sqrt(2))
    assert table.loc["gold_s", "seed_std"] == 0.0 and table.loc["dft", "n_seeds"] == 2
    assert table.loc["mle", "perplexity"] == pytest.approx(2.41) and table.loc["mle", "unk_rate"] == 0.5
    # top-k 20's three runs average to value + 1
    assert table.loc["mle", "greedy_to_topk20_drop"] == 40.0 - 21.0
    assert table.loc["gold_s", "greedy_to_topk20_drop"] == 44.0 - 40.0
    assert table.loc["mle", "distinct_2"] == 320 and math.isnan(table.loc["dft", "distinct_2"])
    assert "| demo | GOLD-s | bleu 44.00 ± 0.00 | 2.44 ± 0.00 | 0.50 | 4.00 | 200 | 2 |" in to_markdown(table.reset_index())


def test_without_both_sweep_decoders_the_drop_stays_empty(tmp_path):
    sweep = SWEEP[SWEEP["decoder"] == "greedy"]
    table = objectives_table(TEST, sweep, {}, {"demo": "bleu"})
    assert table["greedy_to_topk20_drop"].isna().all() and table["distinct_2"].isna().all()
    objectives_figure(table, tmp_path / "objectives.png")
    assert (tmp_path / "objectives.png").read_bytes()[:4] == b"\x89PNG"


def test_table4_lists_mle_the_starting_models_and_the_on_policy_models_with_delta():
    scores = pd.DataFrame(
        score_rows("test", "greedy", {"mle": [14.0, 15.0], "gold_s": [16.0, 16.5], "mle_pg": [14.5, 15.0], "gold_pg": [16.5, 17.0]})
    )
    table = table4(scores, {"demo": "bleu"}, {"demo": {"mle_pg": "mle", "gold_pg": "gold_s"}}, {"demo": {"mle_pg": None, "gold_pg": None}})
    assert list(table["objective"]) == ["mle", "gold_s", "mle_pg", "gold_pg"]
    delta = dict(zip(table["objective"], table["delta"], strict=True))
    assert delta == pytest.approx({"mle": 0.0, "gold_s": 1.75, "mle_pg": 0.25, "gold_pg": 2.25})
    assert list(table["reward"]) == ["", "", "bleu", "bleu"]
    markdown = table4_markdown(table)
    assert "| demo | GOLD-s |  |  | bleu 16.25 ± 0.35 | +1.75 | 2 |" in markdown
    assert "| demo | GOLD+PG | GOLD-s | bleu | bleu 16.75 ± 0.35 | +2.25 | 2 |" in markdown


def test_table4_leaves_out_the_tasks_trained_without_on_policy_objectives():
    rows = score_rows("test", "greedy", {"mle": [14.0, 15.0], "mle_pg": [14.5, 15.0]})
    other = [{**row, "task": "bart"} for row in score_rows("test", "greedy", {"mle": [20.0, 21.0]})]
    scores = pd.DataFrame(rows + other)
    starts, rewards = {"demo": {"mle_pg": "mle"}, "bart": {}}, {"demo": {"mle_pg": None}, "bart": {}}
    table = table4(scores, {"demo": "bleu", "bart": "bleu"}, starts, rewards)
    assert set(table["task"]) == {"demo"} and list(table["objective"]) == ["mle", "mle_pg"]


def test_the_footer_states_each_objectives_label_smoothing():
    from gold_textgen.comparisons.objectives_table import smoothing_note
    from gold_textgen.config.schema import validate_config

    config = validate_config(
        {
            "experiment": {
                "tasks": ["demo"],
                "seeds": [1],
                "objectives": ["mle", "gold_s", "dft", "tailr", "mine"],
                "decoders": ["greedy"],
            },
            "tasks": {
                "demo": {
                    "source": {"kind": "synthetic"},
                    "model": {"kind": "scratch"},
                    "mle": {"label_smoothing": 0.1},
                    "fine_tune": {"label_smoothing": 0.2},
                    "objectives": {
                        "gold_s": {"reward": "s"},
                        "dft": {"loss": "dft"},
                        "tailr": {"loss": "tailr", "density_ratio_threshold": 0.5},
                        "mine": {"loss": "dft", "label_smoothing": 0.05},
                    },
                }
            },
            "decoders": {"greedy": {"do_sample": False}},
        }
    )
    note = smoothing_note(views.label_smoothing_by_objective(config))
    assert note.startswith("Label smoothing epsilon per objective")
    assert "0.2: GOLD-s, TaiLr; 0.1: MLE; 0.05: mine; 0: DFT." in note  # the block's, MLE's, an objective's own, DFT's reference's
