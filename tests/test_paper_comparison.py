"""Lead-3 and the comparison with the paper's numbers: known answers on hand-made outputs."""

import json

import numpy as np
import pandas as pd
import pytest

from gold_textgen.analysis.paper_comparison import ExampleStatistics, OurModel, Run, comparison_table, seed_mean_with_interval, to_markdown
from gold_textgen.evaluation import metrics
from gold_textgen.evaluation.lead3 import lead, split_sentences
from gold_textgen.evaluation.metrics import Scoring
from gold_textgen.runtime.checked_parquet import write_checked_parquet


def test_sentences_split_at_newlines_or_sentence_ends():
    assert split_sentences("One.\nTwo two.\nThree.\nFour.") == ["One.", "Two two.", "Three.", "Four."]
    text = '(CNN) The U.S. team won 3-1. "It was great!" he said. Mr. Smith left at 5 p.m. on Monday. 2015 was good.'
    sentences = ["(CNN) The U.S. team won 3-1.", '"It was great!" he said.', "Mr. Smith left at 5 p.m. on Monday.", "2015 was good."]
    assert split_sentences(text) == sentences
    assert lead(text) == '(CNN) The U.S. team won 3-1.\n"It was great!" he said.\nMr. Smith left at 5 p.m. on Monday.'
    assert lead("Only one sentence here") == "Only one sentence here"


def test_bleu_statistics_sum_to_the_corpus_score():
    hypotheses = ["the cat sat on the mat", "a dog barks loudly today", "hello there"]
    references = ["the cat sat on a mat", "the dog barks loudly", "hello there friend"]
    statistics = metrics.bleu_statistics(hypotheses, references)
    assert statistics.shape[0] == 3
    assert metrics.bleu_from_statistics(statistics.sum(axis=0)) == pytest.approx(metrics.corpus_bleu(hypotheses, references)[0])
    first = metrics.corpus_bleu(hypotheses[:1], references[:1])[0]
    assert metrics.bleu_from_statistics(statistics[[0]].sum(axis=0)) == pytest.approx(first)


def write_run(tmp_path, name, hypotheses, references, nll=None) -> Run:
    generations = tmp_path / f"{name}.jsonl"
    rows = [{"id": f"x{i}", "hypothesis": h, "reference": r} for i, (h, r) in enumerate(zip(hypotheses, references, strict=True))]
    generations.write_text("".join(json.dumps(row) + "\n" for row in rows))
    nll_path = None
    if nll is not None:
        nll_path = tmp_path / f"{name}.parquet"
        table = pd.DataFrame([{"example": e, "position": p, "nll": v} for e, values in enumerate(nll) for p, v in enumerate(values)])
        write_checked_parquet(table, nll_path)
    return Run("t", "mle", 1, str(generations), str(nll_path) if nll_path else None)


def test_perfect_outputs_have_a_degenerate_interval(tmp_path):
    texts = ["a b c d", "e f g h", "i j k l", "m n o p"]
    runs = [ExampleStatistics(write_run(tmp_path, "r", texts, texts), Scoring())]
    assert seed_mean_with_interval(runs, "rouge2", 200, 0.95, 0) == pytest.approx((100.0, 100.0, 100.0))
    assert seed_mean_with_interval(runs, "bleu", 200, 0.95, 0) == pytest.approx((100.0, 100.0, 100.0))


def test_seed_mean_and_perplexity_follow_the_token_nll(tmp_path):
    references = ["a b", "c d", "e f"]
    first = write_run(tmp_path, "s1", references, references, nll=[[0.5, 0.5], [1.0], [0.0, 1.5, 1.5]])
    second = write_run(tmp_path, "s2", references, references, nll=[[1.0, 1.0], [1.0], [1.0, 1.0, 1.0]])
    runs = [ExampleStatistics(first, Scoring()), ExampleStatistics(second, Scoring())]
    point, low, high = seed_mean_with_interval(runs, "perplexity", 500, 0.95, 0)
    assert point == pytest.approx((np.exp(5.0 / 6) + np.exp(1.0)) / 2)
    assert low <= point <= high


def test_examples_must_match_across_seeds(tmp_path):
    a = ExampleStatistics(write_run(tmp_path, "a", ["x"], ["x"]), Scoring())
    b = ExampleStatistics(write_run(tmp_path, "b", ["x", "y"], ["x", "y"]), Scoring())
    with pytest.raises(ValueError, match="different examples"):
        seed_mean_with_interval([a, b], "rouge1", 100, 0.95, 0)


def test_comparison_rows_put_ours_beside_the_paper(tmp_path):
    texts = ["a b c d", "e f g h", "i j k l"]
    run = write_run(tmp_path, "r", texts, texts, nll=[[0.1], [0.1], [0.1]])
    paper = {
        "t": [
            {
                "table": "3",
                "model": "M",
                "family": "transformer",
                "results": {"mle": {"rouge2": 90.0, "perplexity": 1.0}, "gold_s": {"rouge2": 95.0}},
            }
        ]
    }
    table = comparison_table([run], paper, {"t": Scoring()}, {"t": OurModel("ours", "transformer")}, resamples=100)
    mle = table[(table["objective"] == "mle") & (table["metric"] == "rouge2")].iloc[0]
    assert (mle["paper"], mle["ours"], mle["difference"], mle["paper_in_ci"], mle["n_runs"]) == (90.0, 100.0, 10.0, False, 1)
    perplexity = table[table["metric"] == "perplexity"].iloc[0]
    assert perplexity["ours"] == pytest.approx(np.exp(0.1)) and perplexity["difference"] == pytest.approx(np.exp(0.1) - 1.0)
    gold_s = table[table["objective"] == "gold_s"].iloc[0]
    assert gold_s["paper"] == 95.0 and pd.isna(gold_s["ours"])  # not run: the paper's number stands alone


def test_numbers_of_another_model_family_or_token_unit_are_shown_but_not_compared(tmp_path):
    texts = ["a b c d", "e f g h", "i j k l"]
    run = write_run(tmp_path, "r", texts, texts, nll=[[0.1], [0.1], [0.1]])
    results = {"mle": {"bleu": 14.23, "perplexity": 29.25}}
    paper = {"t": [{"table": "1", "model": "NQG++", "family": "recurrent", "results": results}]}
    paper["t"].append({"table": "3", "model": "M", "family": "transformer", "results": results})
    ours = {"t": OurModel("ours", "transformer", perplexity_units="joint BPE 10k")}
    table = comparison_table([run], paper, {"t": Scoring()}, ours, resamples=50)
    recurrent = table[table["paper_table"] == "1"]
    assert recurrent["ours"].notna().all() and recurrent["difference"].isna().all() and recurrent["paper_in_ci"].isna().all()
    assert set(recurrent["note"]) == {"model families differ (paper: recurrent, ours: transformer)"}
    same = table[table["paper_table"] == "3"].set_index("metric")
    assert same.loc["bleu", "difference"] == pytest.approx(100.0 - 14.23) and not same.loc["bleu", "note"]
    assert pd.isna(same.loc["perplexity", "difference"]) and "joint BPE 10k" in same.loc["perplexity", "note"]
    assert "model families differ" in to_markdown(table)


def test_table2_numbers_are_compared_with_the_dev_runs_of_their_decoder_averaged_over_samples(tmp_path):
    """A Table 2 entry (dev split, top-k 5) reads only the dev outputs of that decoder and averages its
    sampling runs; a decoder the experiment did not run is shown as not run; Table 1 reads the test runs."""
    references = ["a b c d", "e f g h"]

    def run(name, hypotheses, split, decoder, sample=0):
        base = write_run(tmp_path, name, hypotheses, references)
        return Run("t", "mle", 1, base.generations, None, split=split, decoder=decoder, sample=sample)

    runs = [
        run("test", references, "test", "greedy"),  # ROUGE-2 100
        run("s1", ["a b c d", "x y z w"], "valid", "topk5", 1),  # 50
        run("s2", ["x y z w", "x y z w"], "valid", "topk5", 2),  # 0
    ]
    paper = {
        "t": [
            {"table": "1", "model": "m", "family": "recurrent", "results": {"mle": {"rouge2": 90.0}}},
            {"table": "2", "model": "m", "family": "recurrent", "split": "valid", "decoder": "topk5", "results": {"mle": {"rouge2": 20.0}}},
            {"table": "2", "model": "m", "family": "recurrent", "split": "valid", "decoder": "beam3", "results": {"mle": {"rouge2": 30.0}}},
        ]
    }
    table = comparison_table(
        runs, paper, {"t": Scoring()}, {"t": OurModel("ours", "recurrent")}, resamples=100, default_run=("test", "greedy")
    )
    rows = {(row.paper_table, row.decoder): row for row in table.itertuples()}
    assert rows[("1", "greedy")].ours == pytest.approx(100.0) and rows[("1", "greedy")].split == "test"
    assert rows[("2", "topk5")].ours == pytest.approx(25.0) and rows[("2", "topk5")].n_runs == 2
    assert rows[("2", "topk5")].difference == pytest.approx(5.0)
    assert pd.isna(rows[("2", "beam3")].ours)
    assert "valid, topk5" in to_markdown(table)
