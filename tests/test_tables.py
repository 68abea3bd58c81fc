import json

import pandas as pd
import pytest

from gold_textgen.analysis.tables import (
    load_scores,
    scoring_note,
    seed_table,
    table1,
    table1_labels,
    table2,
    table2_markdown,
    to_markdown,
    with_families,
    with_scoring,
    write_table,
)


def score(seed, bleu, objective="mle"):
    values = dict(
        bleu=bleu,
        chrf=bleu + 10,
        rouge1=1.0,
        rouge2=2.0,
        rougeL=3.0,
        rougeLsum=3.0,
        perplexity=4.0 + seed,
        unk_rate=1.0 * seed,
        token_accuracy=50.0,
    )
    return dict(task="demo", objective=objective, split="test", decoder="greedy", seed=seed, **values)


@pytest.fixture
def score_files(tmp_path):
    paths = []
    for i, row in enumerate([score(2, 30.0), score(1, 20.0), score(1, 25.0, "other")]):
        path = tmp_path / f"{i}.json"
        path.write_text(json.dumps(row))
        paths.append(path)
    return paths


def test_seed_rows_then_mean_and_sample_std(score_files):
    table = seed_table(load_scores(score_files))
    mle = table[table["objective"] == "mle"]
    assert list(mle["seed"]) == ["1", "2", "mean"]
    summary = mle[mle["seed"] == "mean"].iloc[0]
    assert summary["bleu"] == pytest.approx(25.0)
    assert summary["bleu_std"] == pytest.approx(pd.Series([20.0, 30.0]).std(ddof=1))
    assert summary["n_seeds"] == 2
    single = table[(table["objective"] == "other") & (table["seed"] == "mean")].iloc[0]
    assert pd.isna(single["bleu_std"])  # one seed: no spread to report


def test_markdown_shows_mean_plus_minus_std(score_files):
    text = to_markdown(seed_table(load_scores(score_files)))
    assert "| demo | mle | test | greedy | mean | 25.00 ± 7.07 |" in text


def test_written_csv_round_trips(score_files, tmp_path):
    table = seed_table(load_scores(score_files))
    write_table(table, tmp_path / "t.csv", tmp_path / "t.md")
    again = pd.read_csv(tmp_path / "t.csv")
    assert list(again.columns) == list(table.columns)
    assert again["bleu"].tolist() == pytest.approx(table["bleu"].tolist())


def test_missing_metric_is_an_error(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"task": "demo", "objective": "mle", "split": "test", "decoder": "greedy", "seed": 1}))
    with pytest.raises(ValueError, match="score files lack bleu"):
        load_scores([path])


def sweep_scores():
    rows = []
    for seed, greedy, samples in ((1, 40.0, (30.0, 32.0)), (2, 42.0, (34.0, 36.0))):
        rows.append({**score(seed, greedy), "decoder": "greedy", "sample": 0})
        rows += [{**score(seed, b), "decoder": "topk20", "sample": n} for n, b in enumerate(samples, start=1)]
        rows.append({**score(seed, greedy - 1, "gold_s"), "decoder": "greedy", "sample": 0})
        rows += [{**score(seed, greedy - 2, "gold_s"), "decoder": "topk20", "sample": n} for n in (1, 2)]
    return pd.DataFrame(rows)


def test_table2_averages_runs_then_seeds_and_reports_the_drop():
    table = table2(sweep_scores(), {"demo": "bleu"}, ["greedy", "topk20"])
    assert table[["decoder", "objective"]].values.tolist() == [
        ["greedy", "mle"],
        ["greedy", "gold_s"],
        ["topk20", "mle"],
        ["topk20", "gold_s"],
    ]
    topk = table[(table["decoder"] == "topk20") & (table["objective"] == "mle")].iloc[0]
    assert topk["mean"] == pytest.approx(33.0)  # seed means 31 and 35
    assert topk["seed_std"] == pytest.approx(pd.Series([31.0, 35.0]).std())
    assert topk["run_std"] == pytest.approx(pd.Series([30.0, 32.0]).std())  # the same spread in both seeds
    assert topk["drop_from_greedy"] == pytest.approx(41.0 - 33.0)
    assert topk["n_seeds"] == 2 and topk["n_samples"] == 2
    gold = table[(table["decoder"] == "topk20") & (table["objective"] == "gold_s")].iloc[0]
    assert gold["drop_from_greedy"] == pytest.approx(1.0) and gold["run_std"] == 0.0
    text = table2_markdown(table)
    assert "| topk20 | 33.00 ± 2.83 | 39.00 ± 1.41 |" in text and "| topk20 | 8.00 | 1.00 |" in text


def test_main_table_averages_sampling_runs_per_seed():
    scores = sweep_scores()
    table = seed_table(scores[(scores["decoder"] == "topk20") & (scores["objective"] == "mle")])
    assert table["bleu"].tolist() == pytest.approx([31.0, 35.0, 33.0])


def test_tables_name_the_bleu_signature_and_rouge_variant_of_each_task(score_files):
    scores = load_scores(score_files)
    scores["bleu_signature"] = "nrefs:1|tok:13a"
    scores["chrf_signature"] = "nrefs:1|nc:6|nw:0"
    scores["rouge_variant"] = "files2rouge"
    table = with_scoring(seed_table(scores), scores)
    assert set(table["bleu_signature"]) == {"nrefs:1|tok:13a"} and set(table["rouge_variant"]) == {"files2rouge"}
    assert "- demo: BLEU `nrefs:1|tok:13a`; chrF `nrefs:1|nc:6|nw:0`; ROUGE `files2rouge`" in scoring_note(scores)


def test_table1_labels_every_row_with_its_decoder_when_there_are_several(score_files):
    scores = load_scores(score_files)
    table, _ = table1(scores, {"demo": "bleu"})
    assert table1_labels(table) == ("task", "objective", "role", "seed")
    two = pd.concat([scores, scores.assign(decoder="topk20", bleu=scores["bleu"] - 5)], ignore_index=True)
    table, columns = table1(two, {"demo": "bleu"})
    text = to_markdown(table, columns, labels=table1_labels(table))
    assert "| demo | mle | baseline | greedy | 1 | 20.00 |" in text and "| demo | mle | baseline | topk20 | 1 | 15.00 |" in text


def test_the_baseline_and_the_control_rows_are_labelled(tmp_path):
    rows = [score(1, 20.0), score(1, 22.0, "mle_continued"), score(1, 23.0, "gold_s")]
    for index, row in enumerate(rows):
        (tmp_path / f"{index}.json").write_text(json.dumps(row))
    scores = load_scores(sorted(tmp_path.glob("*.json")))
    table, _ = table1(scores, {"demo": "bleu"})
    roles = table[table["seed"] == "mean"].set_index("objective")["role"].to_dict()
    assert roles == {"mle": "baseline", "mle_continued": "control", "gold_s": ""}
    assert "| mle_continued (control) |" in table2_markdown(table2(scores, {"demo": "bleu"}, ["greedy"]))


def test_tables_name_each_tasks_model_family_standard_models_first():
    """The paper's layout: the recurrent (standard) models of Tables 1 and 2 before the transformers of Table 3."""
    table = pd.DataFrame({"task": ["nqg", "nqg", "nqg_standard"], "objective": ["mle", "gold_s", "mle"], "bleu": [20.0, 21.0, 14.0]})
    labelled = with_families(table, {"nqg": "transformer", "nqg_standard": "recurrent"})
    assert list(labelled.columns) == ["task", "family", "objective", "bleu"]
    assert list(zip(labelled["task"], labelled["family"], labelled["objective"], strict=True)) == [
        ("nqg_standard", "recurrent", "mle"),
        ("nqg", "transformer", "mle"),
        ("nqg", "transformer", "gold_s"),
    ]
