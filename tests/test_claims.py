"""Known answers for the claims as tests over seeds (analysis/claims.py): supported, contradicted and
inconclusive, on the log scale for ratios and with Fieller's interval for a ratio of means."""

import math

import numpy as np
import pytest
from scipy import stats

from gold_textgen.analysis.claims import (
    CONTRADICTED,
    INCONCLUSIVE,
    SUPPORTED,
    difference_claim,
    fieller_interval,
    holm_verdicts,
    power,
    ratio_claim,
    ratio_of_means_claim,
)


def test_a_ratio_above_its_bound_on_every_seed_is_supported_with_its_log_scale_interval():
    gold, mle = [2.65, 2.65, 2.66], [2.05, 2.08, 2.02]
    verdict = ratio_claim("perplexity up", gold, mle, 1.0)
    logs = np.log(np.array(gold) / np.array(mle))
    t = logs.mean() / (logs.std(ddof=1) / math.sqrt(3))
    assert verdict.verdict == SUPPORTED and verdict.p_for == pytest.approx(stats.t.sf(t, 2))
    half = stats.t.isf(0.05, 2) * logs.std(ddof=1) / math.sqrt(3)
    assert verdict.estimate == pytest.approx(math.exp(logs.mean()))
    assert (verdict.low, verdict.high) == pytest.approx((math.exp(logs.mean() - half), math.exp(logs.mean() + half)))


def test_a_ratio_clearly_below_its_bound_is_contradicted_and_a_split_one_inconclusive():
    assert ratio_claim("down", [1.0, 1.01, 0.99], [2.0, 2.02, 1.97]).verdict == CONTRADICTED
    # one seed each way, and a third near 1: no every-seed rule decides it, the t-test does: inconclusive
    split = ratio_claim("mixed", [2.5, 1.9, 2.1], [2.0, 2.2, 2.08])
    assert split.verdict == INCONCLUSIVE and split.low < 1 < split.high
    # adding seeds only adds power: the same small effect on ten seeds is supported
    rng = np.random.default_rng(0)
    base = rng.uniform(2.0, 2.1, 10)
    assert ratio_claim("small but steady", base * rng.normal(1.05, 0.02, 10), base).verdict == SUPPORTED


def test_a_ratio_of_means_is_tested_by_its_linear_contrast_with_fiellers_interval():
    mle_drop, gold_drop = np.array([20.1, 21.1, 21.4]), np.array([2.51, 2.54, 2.61])
    verdict = ratio_of_means_claim("drop 3x", mle_drop, gold_drop, 3.0)
    contrasts = mle_drop - 3 * gold_drop
    t = contrasts.mean() / (contrasts.std(ddof=1) / math.sqrt(3))
    assert verdict.verdict == SUPPORTED and verdict.p_for == pytest.approx(stats.t.sf(t, 2))
    assert verdict.estimate == pytest.approx(mle_drop.mean() / gold_drop.mean())
    # Fieller's bounds are the ratios r whose contrast a - r b has |t| = t_crit: check at both ends
    low, high = fieller_interval(mle_drop, gold_drop, 0.05)
    critical = stats.t.isf(0.05, 2)
    for bound in (low, high):
        values = mle_drop - bound * gold_drop
        assert abs(values.mean() / (values.std(ddof=1) / math.sqrt(3))) == pytest.approx(critical, rel=1e-6)
    assert verdict.low == pytest.approx(low) and verdict.low > 3
    # GOLD-s's drop as large as MLE's on one seed: the claim is not shown, and the denominator near 0 makes
    # the interval unbounded rather than a wrong finite one
    noisy = ratio_of_means_claim("drop 3x", [20.0, 8.0, 21.0], [3.0, 9.0, -1.0], 3.0)
    assert noisy.verdict == INCONCLUSIVE and (noisy.low, noisy.high) == (-math.inf, math.inf)
    # a baseline whose drop is clearly under 3x: contradicted
    assert ratio_of_means_claim("drop 3x", [5.0, 5.2, 4.9], [4.0, 4.1, 3.9], 3.0).verdict == CONTRADICTED


def test_one_seed_or_no_spread_shows_nothing_and_a_family_is_decided_at_holms_levels():
    assert ratio_claim("one seed", [3.0], [2.0]).verdict == INCONCLUSIVE
    assert ratio_claim("identical", [3.0, 3.0], [2.0, 2.0]).verdict == INCONCLUSIVE
    strong = ratio_claim("strong", [2.65, 2.65, 2.66], [2.05, 2.08, 2.02])  # p about 7e-4
    weak = ratio_claim("weak", [2.3, 2.15, 2.2], [2.0, 2.05, 2.0])
    assert weak.verdict == SUPPORTED and 0.0125 < weak.p_for < 0.05
    family = holm_verdicts([strong, weak, weak, weak])
    assert family[0].verdict == SUPPORTED and all(v.verdict == INCONCLUSIVE for v in family[1:])
    assert family[1].p_for == pytest.approx(min(1.0, 3 * weak.p_for))


def test_the_power_of_a_design_is_the_noncentral_t_tail():
    contrasts = [0.25, 0.27, 0.26, 0.24]
    shift = np.mean(contrasts) / np.std(contrasts, ddof=1) * math.sqrt(3)
    assert power(contrasts, 3, 0.0125) == pytest.approx(stats.nct.sf(stats.t.isf(0.0125, 2), 2, shift))
    assert power([0.1, -0.1, 0.05], 3, 0.05) < power([0.1, -0.1, 0.05], 10, 0.05) < 1


def test_a_difference_claim_is_the_one_sided_t_test_of_the_per_seed_differences():
    """nqg_real's GOLD-s minus control test BLEU on its shipped split (+0.55, +0.80, +0.49): supported; the
    same gain on another float path (+1.39, +0.50, +0.08): inconclusive."""
    shipped = difference_claim("BLEU up", [11.29, 11.55, 10.71], [10.74, 10.75, 10.22])
    deltas = np.array([0.55, 0.80, 0.49])
    t = deltas.mean() / (deltas.std(ddof=1) / math.sqrt(3))
    assert shipped.verdict == SUPPORTED and shipped.p_for == pytest.approx(stats.t.sf(t, 2), rel=1e-6)
    assert shipped.estimate == pytest.approx(deltas.mean())
    assert difference_claim("BLEU up", [1.39, 0.50, 0.08], [0, 0, 0]).verdict == INCONCLUSIVE
    assert difference_claim("BLEU up by 1", [11.29, 11.55, 10.71], [10.74, 10.75, 10.22], bound=1.0).verdict == CONTRADICTED
