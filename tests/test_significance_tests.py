"""Known answers for the paired tests (comparisons/paired_tests.py) against sacrebleu's own PairedTest and
scipy, Holm's adjustment, the power figures, sacrebleu's private statistics API, and the human-evaluation
tally's agreement and sign test."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sacrebleu
from sacrebleu.significance import PairedTest

from gold_textgen.analysis.human_eval import fleiss_kappa, sign_test, tally
from gold_textgen.comparisons import paired_tests
from gold_textgen.evaluation import sacrebleu_statistics

REAL_QUESTIONS = Path(__file__).resolve().parents[2] / "shared" / "real" / "nqg_zhou2017_dev" / "dev.txt.shuffle.dev.target.txt"


def perturbed(references: list[str], every: int, offset: int) -> list[str]:
    """Each reference with every `every`-th word (from `offset`) dropped: a system of known, moderate quality."""
    return [" ".join(word for index, word in enumerate(text.split()) if (index + offset) % every) for text in references]


@pytest.fixture(scope="module")
def real_systems():
    if not REAL_QUESTIONS.is_file():
        pytest.skip(f"the real NQG dev split is not at {REAL_QUESTIONS} (shared data folder)")
    references = REAL_QUESTIONS.read_text(encoding="utf-8").splitlines()[:400]
    # Two systems of similar quality (BLEU 17.4 and 16.1): each drops every 4th word, from other positions.
    return references, perturbed(references, 4, 1), perturbed(references, 4, 0)


def sacrebleu_p(test_type: str, system, baseline, references, samples: int) -> float:
    _, results = PairedTest([("baseline", baseline), ("system", system)], {"BLEU": sacrebleu.BLEU()}, [references], test_type, samples)()
    return results["BLEU"][1].p_value


def bleu_statistics(texts, references):
    return sacrebleu_statistics.statistics("bleu", texts, references)


def bleu_score(sums, count):
    return sacrebleu_statistics.score_sums("bleu", sums)


@pytest.mark.parametrize("test_type", ["bs", "ar"])
def test_the_paired_tests_agree_with_sacrebleus_on_real_bleu(real_systems, test_type):
    """Within Monte-Carlo error (4 standard errors of each estimate) of sacrebleu's PairedTest."""
    references, system, baseline = real_systems
    samples = 2000
    expected = sacrebleu_p(test_type, system, baseline, references, samples)
    ours_stats, base_stats = bleu_statistics(system, references), bleu_statistics(baseline, references)
    rng = np.random.default_rng(1)
    if test_type == "bs":
        indices = rng.integers(0, len(references), size=(samples, len(references)))
        ours = paired_tests.paired_bootstrap([ours_stats], [base_stats], bleu_score, indices)["p"]
    else:
        swaps = rng.integers(0, 2, size=(samples, len(references))).astype(bool)
        ours = paired_tests.approximate_randomization([ours_stats], [base_stats], bleu_score, swaps)
    assert 0.01 < expected < 0.9, "the systems should differ moderately for the comparison to mean something"
    error = 4 * np.sqrt(2 * expected * (1 - expected) / samples) + 2 / samples
    assert abs(ours - expected) < error, (ours, expected)


def test_approximate_randomization_of_a_mean_is_scipys_paired_permutation_test():
    rng = np.random.default_rng(2)
    base = rng.uniform(0, 1, 300)
    system = base + rng.normal(0.03, 0.2, 300)
    swaps = rng.integers(0, 2, size=(4000, 300)).astype(bool)
    ar = paired_tests.approximate_randomization([system[:, None]], [base[:, None]], lambda sums, count: sums[:, 0] / count, swaps)
    permutation = paired_tests.paired_permutation(system, base, 4000, 3)
    assert abs(ar - permutation) < 4 * np.sqrt(2 * permutation * (1 - permutation) / 4000) + 0.002


def test_identical_systems_give_p_one_and_a_constant_shift_p_below_one_percent():
    stats = np.random.default_rng(4).uniform(0, 1, (200, 1))
    mean = lambda sums, count: sums[:, 0] / count  # noqa: E731
    rng = np.random.default_rng(5)
    indices, swaps = rng.integers(0, 200, (1000, 200)), rng.integers(0, 2, (1000, 200)).astype(bool)
    assert paired_tests.paired_bootstrap([stats], [stats], mean, indices)["p"] == 1.0
    assert paired_tests.approximate_randomization([stats], [stats], mean, swaps) == 1.0
    assert paired_tests.paired_bootstrap([stats + 0.1], [stats], mean, indices)["p"] < 0.01
    assert paired_tests.approximate_randomization([stats + 0.1], [stats], mean, swaps) < 0.01


def test_holm_on_a_hand_made_table():
    # sorted: 0.005 x 4 = 0.02, 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 = 0.04 -> kept monotone: 0.06
    assert paired_tests.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert paired_tests.holm([0.5, float("nan"), 0.01]) == pytest.approx([0.5, float("nan"), 0.02], nan_ok=True)
    assert paired_tests.holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])


def test_the_seed_t_test_has_no_p_without_spread():
    assert np.isnan(paired_tests.seed_t_test(np.array([0.5, 0.5, 0.5])))
    assert paired_tests.seed_t_test(np.zeros(3)) == 1.0


@pytest.mark.parametrize("name", sacrebleu_statistics.SACREBLEU_METRICS)
def test_sacrebleus_private_statistics_score_as_its_corpus_score(name):
    """Fails loudly the day sacrebleu's private sufficient-statistics API changes."""
    hypotheses = ["the cat sat on the mat .", "a quick brown fox", "what is the capital of france ?", "no"]
    references = ["the cat is on the mat .", "the quick brown fox jumps", "what is france 's capital ?", "yes"]
    statistics = sacrebleu_statistics.statistics(name, hypotheses, references)
    assert statistics.shape[0] == len(hypotheses)
    expected, signature = sacrebleu_statistics.corpus_score(name, hypotheses, references)
    assert sacrebleu_statistics.score_sums(name, statistics.sum(axis=0))[0] == pytest.approx(expected)
    assert signature.startswith("nrefs:1")
    subset = sacrebleu_statistics.score_sums(name, statistics[[0, 2]].sum(axis=0))[0]
    assert subset == pytest.approx(sacrebleu_statistics.corpus_score(name, hypotheses[::2], references[::2])[0])


def test_fleiss_kappa_and_the_sign_test_have_their_known_values():
    items = list(range(4))
    agree = [{0: "A", 1: "B", 2: "tie", 3: "A"}] * 3
    assert fleiss_kappa(agree, items) == pytest.approx(1.0)
    # Two raters, four items, agree on two: observed 0.5; label shares A 4/8, B 3/8, tie 1/8 -> chance 0.40625
    half = [{0: "A", 1: "B", 2: "A", 3: "tie"}, {0: "A", 1: "B", 2: "B", 3: "A"}]
    assert fleiss_kappa(half, items) == pytest.approx((0.5 - 0.40625) / (1 - 0.40625))
    assert np.isnan(fleiss_kappa(agree[:1], items))
    assert sign_test(9, 1) == pytest.approx(0.021484375)  # two-sided binomial, 11/512 x 2 / 2
    assert sign_test(5, 5) == pytest.approx(1.0) and sign_test(0, 0) == 1.0


def test_the_tally_reports_agreement_and_the_sign_test(tmp_path):
    key = pd.DataFrame({"item": [0, 1, 2, 3], "system_a": ["gold", "mle", "gold", "gold"], "system_b": ["mle", "gold", "mle", "mle"]})
    sheets = []
    for rater in range(3):
        path = tmp_path / f"r{rater}.csv"
        pd.DataFrame({"item": [0, 1, 2, 3], "preference": ["A", "B", "A", "tie" if rater else "A"]}).to_csv(path, index=False)
        sheets.append(path)
    result = tally(key, sheets).set_index("system")
    assert result.loc["gold", "win"] == 75.0 and result.loc["gold", "tie"] == 25.0
    assert result.loc["gold", "sign_test_p"] == pytest.approx(0.25)  # 3 wins, 0 losses: 2 x 1/8
    assert 0 < result.loc["gold", "fleiss_kappa"] < 1
