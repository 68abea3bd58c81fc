"""The paper's registered claims tested on runs (comparisons/claim_verdicts.py): each contrast's known answer, Holm's
deciding levels, verdicts that always agree with their printed bounds and adjusted p-values, and the
power reading of a claim that is not shown."""

import numpy as np
import pandas as pd
import pytest
from conftest import REPO

from gold_textgen.analysis.paper_comparison import ExampleStatistics, Run
from gold_textgen.claims.paper_claims import CLAIMS, LARGE_NLL, NEAR_ZERO_NLL, ClaimTest
from gold_textgen.comparisons import claim_verdicts as claims
from gold_textgen.comparisons import method_test
from gold_textgen.comparisons.claim_verdicts import (
    CONTRADICTED,
    INCONCLUSIVE,
    SUPPORTED,
    Measured,
    contrast_of,
    decide,
    deciding_levels,
    measure,
)
from gold_textgen.comparisons.method_test import Noise
from gold_textgen.evaluation.metrics import Scoring
from gold_textgen.runtime.checked_parquet import write_checked_parquet
from gold_textgen.runtime.files import write_jsonl


class Scores:
    """A run whose per-example score is `values` (a mean metric), for any column."""

    def __init__(self, values):
        self.values = np.asarray(values, float)
        self.ids = [str(i) for i in range(self.values.size)]

    def score(self, column, indices):
        return self.values[indices].mean(axis=1)


def runs_of(values: dict) -> dict:
    """(objective, seed, split, decoder) -> [Scores]: `values` maps (objective, decoder) to per-seed example scores."""
    return {
        (objective, seed, split, decoder): [Scores(scores)]
        for (objective, decoder), per_seed in values.items()
        for seed, scores in enumerate(per_seed, start=1)
        for split in ("test", "valid")
    }


def test_holms_deciding_levels_are_the_rejecting_step_or_the_step_where_it_stopped():
    # m = 4: 0.001 < 0.05/4 rejected at 0.0125; 0.03 >= 0.05/3: stopped there, every later one at 0.05/3
    assert deciding_levels([0.03, 0.001, 0.2, 0.04], 0.05) == pytest.approx([0.05 / 3, 0.0125, 0.05 / 3, 0.05 / 3])
    assert deciding_levels([0.001, 0.002], 0.05) == pytest.approx([0.025, 0.05])


def test_each_contrast_is_its_difference_log_ratio_or_drop_on_the_same_examples():
    base = np.linspace(1.0, 2.0, 20)
    runs = runs_of(
        {
            ("mle", "greedy"): [base, base + 0.1],
            ("gold_s", "greedy"): [base + 0.5, base + 0.4],
            ("mle", "topk20"): [base - 1.0, base - 0.9],
            ("gold_s", "topk20"): [base + 0.3, base + 0.3],
        }
    )
    full = np.arange(20)[None, :]
    quality = ClaimTest("quality_gold_s", "t", "gold_s", "mle", "greedy", "test")
    assert claims.contrast_of(quality, runs, [1, 2], "bleu", full)[:, 0] == pytest.approx([0.5, 0.3])
    perplexity = ClaimTest("perplexity_gold_s", "t", "gold_s", "mle", "greedy", "test")
    expected = np.log((base.mean() + np.array([0.5, 0.4])) / (base.mean() + np.array([0.0, 0.1])))
    assert claims.contrast_of(perplexity, runs, [1, 2], "perplexity", full)[:, 0] == pytest.approx(expected)
    drop = ClaimTest("sampling_drop_topk20", "t", "gold_s", "mle", "topk20", "valid")
    # MLE loses 1.0 on both seeds, GOLD-s 0.2 and 0.1: the contrast is 0.8 and 0.9
    assert claims.contrast_of(drop, runs, [1, 2], "bleu", full)[:, 0] == pytest.approx([0.8, 0.9])


def measured(contrasts, shared=0.0, effect=None, claim="quality_gold_s"):
    contrasts = np.asarray(contrasts, float)
    noise = Noise(float(contrasts.var(ddof=1)) if contrasts.size > 1 else 0.0, shared, contrasts.size)
    test = ClaimTest(claim, "t", "gold_s", "mle", "greedy", "test")
    return Measured(test, tuple(range(1, contrasts.size + 1)), contrasts, noise, effect)


def test_verdicts_agree_with_their_bounds_and_holm_adjusted_p_values():
    rng = np.random.default_rng(0)
    for _ in range(12):
        family = [measured(rng.normal(rng.normal(0, 1), 0.5, 3), shared=rng.uniform(0, 0.2)) for _ in range(4)]
        for verdict in decide(family):
            assert (verdict.verdict == SUPPORTED) == (verdict.low > 0) == (verdict.p_for_holm < 0.05)
            assert (verdict.verdict == CONTRADICTED) == (verdict.high < 0) == (verdict.p_against_holm < 0.05)


def test_a_clear_effect_is_supported_a_clear_reversal_contradicted_and_one_seed_says_nothing():
    verdicts = decide([measured([1.0, 1.1, 0.9], 0.001), measured([-1.0, -1.1, -0.9], 0.001), measured([0.5])])
    assert [v.verdict for v in verdicts] == [SUPPORTED, CONTRADICTED, INCONCLUSIVE]
    assert verdicts[2].reading.startswith("one seed")


def test_an_inconclusive_claim_reads_as_the_seeds_that_would_show_the_papers_effect():
    noisy, hopeless = decide([measured([0.6, -0.4, 0.3], 0.01, effect=1.0), measured([0.6, -0.4, 0.3], 4.0, effect=1.0)])
    assert noisy.verdict == INCONCLUSIVE and 0 < noisy.power < 0.8 and noisy.seeds_needed > 3
    assert f"{noisy.seeds_needed:.0f} seeds would detect it with 80% power" in noisy.reading
    assert np.isnan(hopeless.seeds_needed) and "no number of seeds" in hopeless.reading
    ratio = decide([measured([0.2, 0.25, 0.22], 0.0001, effect=np.log(1.4), claim="perplexity_gold_s")])[0]
    assert ratio.estimate == pytest.approx(np.exp(np.mean([0.2, 0.25, 0.22]))) and ratio.low > 1
    assert ratio.paper_effect == pytest.approx(1.4) and "its ratio of 1.4 lies" in ratio.reading


def test_a_claims_table_reads_back_as_its_verdicts():
    table = pd.DataFrame([vars(v) | {"claim": "quality_gold_s"} for v in decide([measured([1.0, 1.2, 0.8], 0.01, effect=0.5)])])
    (verdict,) = claims.verdicts_of(table)
    assert verdict.verdict == SUPPORTED and verdict.line().startswith("supported    quality_gold_s: gold_s vs mle")


def write_run(root, name, hypotheses, references, nll_rows):
    generations = root / f"{name}.jsonl"
    write_jsonl(
        generations, [{"id": str(i), "hypothesis": h, "reference": r} for i, (h, r) in enumerate(zip(hypotheses, references, strict=True))]
    )
    nll = root / f"{name}.parquet"
    write_checked_parquet(pd.DataFrame(nll_rows, columns=["example", "position", "token_id", "nll", "correct"]), nll)
    return ExampleStatistics(Run("t", name, 1, str(generations), str(nll)), Scoring())


def test_the_token_shares_and_the_length_slope_are_scored_from_per_example_sums(tmp_path):
    references = ["a b c d", "a b", "a b c d e f"]
    nll = [(0, 0, 5, 0.05, True), (0, 1, 5, 0.5, True), (1, 0, 5, 6.0, False), (2, 0, 5, 0.01, True), (2, 1, 5, 0.02, True)]
    run = write_run(tmp_path, "m", ["a b c d", "x y", "a b c"], references, nll)
    full = np.arange(3)[None, :]
    assert run.score("nll_below", full)[0] == pytest.approx(3 / 5) and NEAR_ZERO_NLL == 0.1
    assert run.score("nll_above", full)[0] == pytest.approx(1 / 5) and LARGE_NLL == 5.0
    # lengths 4, 2, 3; sentence BLEU-2 100, 0 and that of "a b c" against "a b c d e f"
    lengths = np.array([4, 2, 3], float)
    bleu = np.array([100.0, 0.0, run.statistics("length_slope")[2, 1]])
    assert run.score("length_slope", full)[0] == pytest.approx(np.polyfit(lengths, bleu, 1)[0])
    # a resample scores its own examples: the first twice and the third
    assert run.score("nll_below", np.array([[0, 0, 2]]))[0] == pytest.approx(4 / 6)  # 1 of 2, twice; 2 of 2


def test_measuring_a_claim_carries_the_papers_relative_effect_to_the_runs_baseline_score():
    base = np.full(30, 40.0)
    runs = runs_of({("mle", "greedy"): [base, base, base], ("gold_s", "greedy"): [base + 1, base + 2, base + 1.5]})
    test = ClaimTest("quality_gold_s", "t", "gold_s", "mle", "greedy", "test")
    result = measure(test, runs, [1, 2, 3], "bleu", resamples=50, draw_seed=0)
    assert result.contrasts == pytest.approx([1.0, 2.0, 1.5])
    assert result.paper_effect == pytest.approx(CLAIMS["quality_gold_s"].effect.value * 40.0)
    assert result.noise.shared == 0  # every example moved alike: the test set adds no noise


def test_a_verdict_says_where_the_papers_effect_stands_against_its_bounds():
    """Inconclusive in direction but with the paper's effect above the upper bound: the run rules the paper's
    effect out and says so, printing no seeds that would show it (it is no design too small); inside the
    bounds, the seeds needed as before; a supported claim whose bounds lie above the paper's: larger."""
    ruled_out, too_small, larger = decide(
        [
            measured([0.05, -0.02, 0.03], 0.0001, effect=1.0),
            measured([0.6, -0.4, 0.3], 0.01, effect=1.0),
            measured([3.0, 3.1, 2.9], 0.0001, effect=1.0),
        ]
    )
    assert ruled_out.verdict == INCONCLUSIVE and ruled_out.high < 1.0
    expected = f"smaller than the paper's: its +1 lies above the upper bound {ruled_out.high:.3g}, which rules it out"
    assert ruled_out.reading.startswith(expected)
    assert "seeds would detect it" not in ruled_out.reading
    assert too_small.verdict == INCONCLUSIVE and "the paper's +1 lies within the bounds" in too_small.reading
    assert "seeds would detect it with 80% power" in too_small.reading
    assert larger.verdict == SUPPORTED and larger.reading.startswith("larger than the paper's: its +1 lies below the lower bound")


@pytest.mark.parametrize("claim", sorted(CLAIMS))
def test_every_claims_resamples_are_drawn_jointly_for_every_seed_and_model(claim):
    """Three seeds whose models meet the test examples alike (the same per-example contrast): the test set's
    noise is all shared, so `measure` must find the shared variance at the variance of the examples' mean
    (to Monte Carlo error). Resamples drawn per seed would leave the seeds' resampled contrasts
    uncorrelated and the shared variance near 0 (a per-seed permutation of the resample rows in
    claims._score fails this test for all 12 registered claims): a test of every claim's pipeline."""
    rng = np.random.default_rng(1)
    size, resamples = 200, 400
    base, gains, drops, kept = rng.uniform(20, 60, size), rng.normal(2.0, 4.0, size), rng.uniform(0, 10, size), rng.uniform(0, 1, size)
    values = {}
    for decoder in {"greedy", "topk20", *CLAIMS[claim].decoders}:
        drop = 0.0 if decoder == "greedy" else drops  # what sampling loses, per example
        values[("mle", decoder)] = [base - drop] * 3
        values[("gold_s", decoder)] = [base + gains - drop * kept] * 3
    decoder = next((d for d in CLAIMS[claim].decoders if d != "greedy"), "topk20") if CLAIMS[claim].contrast == "drop" else "greedy"
    test = ClaimTest(claim, "t", "gold_s", "mle", decoder, "test")
    result = measure(test, runs_of(values), [1, 2, 3], "bleu", resamples=resamples, draw_seed=0)
    per_example = contrast_of(test, runs_of(values), [1], "bleu", np.arange(size)[:, None]).ravel()  # each example alone
    expected = per_example.var(ddof=1) / size  # the variance of the examples' mean
    assert result.noise.seed_variance == 0  # the seeds agree
    assert result.noise.shared == pytest.approx(expected, rel=0.25), (claim, result.noise.shared, expected)


def test_the_papers_effect_comes_from_the_row_of_the_tasks_data_set_and_model():
    """nqg_real trains NQG++ on NQG: its claims carry Table 1's NQG++ row (GOLD-s 16.10 against 14.23, +13.1%
    of the baseline), not the median over the paper's six rows (+3.98%); the demo language has no row."""
    from gold_textgen.claims.paper_claims import experiment_claims
    from gold_textgen.config.layers import merged_config
    from gold_textgen.config.schema import validate_config

    real = validate_config(merged_config(REPO / "config.yaml", [REPO / "configs" / "nqg_real.yaml"]))
    rows = {(test.claim, test.baseline): test.paper_row for test in experiment_claims(real)}
    assert rows[("quality_gold_s", "mle")] == "NQG (NQG++, BLEU)" and rows[("perplexity_gold_s", "mle")] == "NQG (NQG++)"
    assert rows[("sampling_drop_topk20", "mle")] == "NQG (BLEU)" and rows[("nll_near_zero", "mle")] is None
    demo = validate_config(merged_config(REPO / "config.yaml", []))
    assert {test.paper_row for test in experiment_claims(demo)} == {None}
    base = np.full(30, 10.0)
    runs = runs_of({("mle", "greedy"): [base] * 3, ("gold_s", "greedy"): [base + 1] * 3})
    for row, gain in (("NQG (NQG++, BLEU)", 16.10 / 14.23 - 1), (None, CLAIMS["quality_gold_s"].effect.value)):
        test = ClaimTest("quality_gold_s", "t", "gold_s", "mle", "greedy", "test", paper_row=row)
        assert measure(test, runs, [1, 2, 3], "bleu", resamples=20, draw_seed=0).paper_effect == pytest.approx(gain * 10.0)
    assert CLAIMS["quality_gold_s"].effect.value == pytest.approx(0.0398, abs=5e-4)
    verdict = decide(
        [measure(ClaimTest("quality_gold_s", "t", "gold_s", "mle", "greedy", "test", "NQG (NQG++, BLEU)"), runs, [1, 2, 3], "bleu", 20, 0)]
    )[0]
    assert verdict.paper_row == "the paper's NQG (NQG++, BLEU)" and "(the paper's NQG (NQG++, BLEU))" in verdict.reading


def test_a_printed_power_says_how_sure_it_is():
    """Three seeds measure their variance loosely: the verdict gives the power at the ends of that variance's
    80% interval beside the power, lowest first, the power between them."""
    verdict = decide([measured([0.6, -0.4, 0.3], 0.01, effect=1.0)])[0]
    assert verdict.power_low < verdict.power < verdict.power_high
    assert f"({verdict.power_low:.2f}-{verdict.power_high:.2f} over the seeds' variance's 80% interval)" in verdict.reading
    assert np.isnan(decide([measured([0.6, -0.4, 0.3], 0.01)])[0].power_low)  # no paper effect, no power


def test_every_verdict_gives_the_smallest_effect_its_design_detects_with_or_without_a_paper_effect():
    """A claim without a number in its source (the successors', the NLL figures) still says how large an
    effect its design could show: the effect with 80% power at Holm's strictest level, the level the
    printed power uses."""
    family = [measured([0.6, -0.4, 0.3], 0.01), measured([0.2, 0.1, 0.5], 0.02, effect=1.0)]
    verdicts = decide(family)
    strictest = 0.05 / len(family)
    for verdict, one in zip(verdicts, family, strict=True):
        assert method_test.critical_power(verdict.detectable, one.noise, strictest) == pytest.approx(0.8, abs=3e-3)
    assert np.isnan(decide([measured([0.4])])[0].detectable)  # one seed: no design of the method
