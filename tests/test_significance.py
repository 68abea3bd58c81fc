"""Known answers for the significance of a difference between two objectives (comparisons/significance.py)."""

import numpy as np
import pandas as pd
import pytest

from gold_textgen.analysis.paper_comparison import ExampleStatistics, Run
from gold_textgen.comparisons.significance import ONE_SEED, Comparison, compare, reading, seed_interval, significance_table
from gold_textgen.comparisons.significance_report import cell, note, significance_columns, with_significance
from gold_textgen.evaluation.metrics import Scoring
from gold_textgen.runtime.files import write_jsonl


class Scores:
    """Per-example scores whose corpus metric is their mean (as ROUGE's is)."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=float)
        self.ids = [str(i) for i in range(self.values.size)]

    def statistics(self, column):
        return self.values[:, None]

    def score_sums(self, column, sums, count):
        return sums[:, 0] / count


def significant(result, alpha=0.05):
    """One comparison alone (a family of one: Holm changes nothing)."""
    return result.p < alpha


def described(result):
    return cell(
        {
            **{name: getattr(result, name) for name in ("delta", "low", "high", "n_seeds")},
            "significant": "yes" if significant(result) else "no",
        }
    )


BASE = np.random.default_rng(7).uniform(0, 50, size=200)


def runs(shifts, noise=0.0):
    rng = np.random.default_rng(3)
    return {seed: Scores(BASE + shift + noise * rng.standard_normal(BASE.size)) for seed, shift in enumerate(shifts, start=1)}


def test_identical_systems_are_not_significant():
    result = compare(runs([0, 0, 0]), runs([0, 0, 0]), "rouge2")
    assert result.delta == 0 and (result.test_low, result.test_high, result.seed_low, result.seed_high) == (0, 0, 0, 0)
    assert not significant(result) and result.n_seeds == 3
    assert result.p_randomization == pytest.approx(1) and result.p == pytest.approx(1) and (result.low, result.high) == (0, 0)


def test_a_constant_shift_is_significant():
    result = compare(runs([2, 2, 2]), runs([0, 0, 0]), "rouge2")
    assert result.delta == pytest.approx(2) and result.test_low == pytest.approx(2) and result.test_high == pytest.approx(2)
    assert result.seed_low == pytest.approx(2) and result.seed_high == pytest.approx(2)
    # no variance at all: no seed t-test (undefined, never p = 0); the decision falls to the exact test-set test
    assert np.isnan(result.p_seeds) and result.p == result.p_randomization < 0.01
    assert described(result) == "+2.00 [2.00, 2.00] yes"


def test_noise_around_no_difference_is_not_significant():
    result = compare(runs([0, 0, 0], noise=10.0), runs([0, 0, 0]), "rouge2")
    assert result.test_low < 0 < result.test_high and not significant(result)


def test_seeds_that_disagree_are_not_significant_whatever_the_test_set_says():
    """+1, -1, +1: every seed's shift is certain on the test set, the mean (1/3) too, but the seed spread
    is wide: the t interval (2 degrees of freedom) holds 0."""
    result = compare(runs([1, -1, 1]), runs([0, 0, 0]), "rouge2")
    assert result.test_low == pytest.approx(1 / 3) and result.test_high == pytest.approx(1 / 3)
    half = 4.302652729911275 * np.std([1, -1, 1], ddof=1) / np.sqrt(3)
    assert (result.seed_low, result.seed_high) == pytest.approx((1 / 3 - half, 1 / 3 + half))
    assert result.p_randomization < 0.01 and result.p_seeds > 0.05 and not significant(result)
    # the deciding test: the seeds' variance of the mean (the test set adds none here): Student's t over seeds
    assert result.noise.shared == 0 and result.p == pytest.approx(result.p_seeds, rel=1e-3) and result.low < 0 < result.high
    assert [s.delta for s in result.seeds] == pytest.approx([1, -1, 1])


def test_one_seed_is_judged_on_the_test_set_alone():
    result = compare(runs([0.8]), runs([0]), "rouge2")
    assert np.isnan(result.seed_low) and np.isnan(result.p_seeds) and significant(result)
    assert result.noise.seed_variance == 0  # no seeds' spread with one seed: the test set's noise alone decides
    assert seed_interval(np.array([1.0]), 0.95) != seed_interval(np.array([1.0, 2.0]), 0.95)
    # and a table of one seed says what it is about, these models, and gives no verdict on the objective
    one_seed = {"significant": ONE_SEED, "n_seeds": 1, "delta": 0.8, "mde": 0.1, "p": 0.001, "p_holm": 0.002}
    assert reading(one_seed) == (
        "one seed: these models on this test set: the test-set bootstrap of these two models, p (Holm) 0.002; "
        "nothing is said about the method"
    )
    assert reading({**one_seed, "significant": "yes", "n_seeds": 3}) == "yes"
    # a no quotes the adjusted p its decision used, never the unadjusted one
    unadjusted = {**one_seed, "significant": "no", "n_seeds": 3, "p": 0.025, "p_holm": 0.051, "mde": 0.5}
    assert reading(unadjusted) == "no: not beyond the noise (p (Holm) 0.051; detectable ±0.50)"
    assert reading({**unadjusted, "delta": 0.2}) == "no: smaller than the experiment detects (p (Holm) 0.051; detectable ±0.50)"


def test_runs_on_other_examples_or_without_a_shared_seed_are_refused():
    other = {1: Scores(BASE[:100])}
    with pytest.raises(ValueError, match="different examples"):
        compare(other, runs([0]), "rouge2")
    with pytest.raises(ValueError, match="share no training seed"):
        compare({5: Scores(BASE)}, runs([0]), "rouge2")


def test_bleu_is_resampled_from_its_sufficient_statistics(tmp_path):
    """Real generation files: a system equal to the baseline differs by exactly 0; one that writes every
    reference exactly is better on every resample."""
    references = [f"the cat number {i} sat on the mat" for i in range(30)]
    baseline = [f"a cat number {i} sat on a mat" for i in range(30)]

    def statistics(name, hypotheses):
        path = tmp_path / f"{name}.jsonl"
        pairs = enumerate(zip(hypotheses, references, strict=True))
        write_jsonl(path, [{"id": str(i), "hypothesis": h, "reference": r} for i, (h, r) in pairs])
        return {1: ExampleStatistics(Run("t", name, 1, str(path)), Scoring())}

    same = compare(statistics("a", baseline), statistics("b", baseline), "bleu", resamples=200, trials=500)
    assert same.delta == 0 and not significant(same) and same.p == pytest.approx(1)
    perfect = compare(statistics("c", references), statistics("b", baseline), "bleu", resamples=200, trials=500)
    assert perfect.delta > 40 and perfect.test_low > 0 and significant(perfect)
    assert isinstance(perfect, Comparison)


REFERENCES = [f"the cat number {i} sat on the mat" for i in range(20)]


def generation_runs(tmp_path, hypotheses_of):
    """Runs of task t with generation files: objective -> seed -> hypotheses of REFERENCES."""
    runs = []
    for objective, per_seed in hypotheses_of.items():
        for seed, hypotheses in per_seed.items():
            path = tmp_path / f"{objective}-{seed}.jsonl"
            pairs = enumerate(zip(hypotheses, REFERENCES, strict=True))
            write_jsonl(path, [{"id": str(i), "hypothesis": h, "reference": r} for i, (h, r) in pairs])
            runs.append(Run("t", objective, seed, str(path)))
    return runs


def test_the_table_compares_every_objective_with_mle_and_the_control_and_tables_take_its_columns(tmp_path):
    poor = [f"a cat number {i} sat on a mat" for i in range(20)]
    runs = generation_runs(
        tmp_path,
        {"mle": {1: poor, 2: poor}, "mle_continued": {1: poor, 2: poor}, "gold_s": {1: REFERENCES, 2: REFERENCES}},
    )
    table = significance_table(runs, {"t": "bleu"}, {"t": Scoring()}, resamples=100, trials=300)
    assert list(zip(table["objective"], table["baseline"], strict=True)) == [
        ("mle_continued", "mle"),
        ("gold_s", "mle"),
        ("gold_s", "mle_continued"),
    ]
    control = table.iloc[0]
    assert control["delta"] == 0 and control["significant"] == "no" and control["n_seeds"] == 2
    assert table.iloc[1]["significant"] == "yes" and table.iloc[1]["delta"] > 40
    assert table.iloc[1]["per_seed"].startswith("1: +")
    scores = pd.DataFrame(
        {"task": "t", "objective": ["mle", "gold_s", "gold_s"], "split": "test", "decoder": "greedy", "seed": ["mean", "1", "mean"]}
    )
    merged = with_significance(scores, table)
    assert significance_columns(merged) == ["vs_mle", "vs_mle_continued"]
    assert merged.loc[2, "vs_mle"].endswith(" yes") and merged.loc[2, "vs_mle_significant"] == "yes"
    assert pd.isna(merged.loc[0, "vs_mle"]) and pd.isna(merged.loc[1, "vs_mle"])  # the baseline itself; a seed's row
    assert "against MLE" in note(table) and "every seed shares" in note(table)
    assert note(table.iloc[0:0]) == ""


def test_a_one_seed_table_gives_no_verdict_on_the_method(tmp_path):
    """One training seed (configs/local_example_quick.yaml's design): GOLD-s far above MLE on the test set,
    yet the table's `significant` and Table 1's compact cell say "one seed: these models on this test set",
    never yes or no: the seeds' spread is unmeasured, so nothing is said about the method."""
    from gold_textgen.comparisons.significance_report import cell

    poor = [f"a cat number {i} sat on a mat" for i in range(20)]
    runs = generation_runs(tmp_path, {"mle": {1: poor}, "mle_continued": {1: poor}, "gold_s": {1: REFERENCES}})
    table = significance_table(runs, {"t": "bleu"}, {"t": Scoring()}, resamples=100, trials=300)
    assert set(table["significant"]) == {ONE_SEED} and (table["n_seeds"] == 1).all()
    gold = table[(table["objective"] == "gold_s") & (table["baseline"] == "mle")].iloc[0]
    assert gold["delta"] > 40 and cell(gold).endswith(ONE_SEED) and gold["reading"].startswith(ONE_SEED)
