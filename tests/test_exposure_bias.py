import math

import pytest

from gold_textgen.analysis.exposure_bias import bleu_by_length, length_bin_edges, length_bins, sentence_bleu, sentence_scores


@pytest.mark.parametrize(
    "hypothesis, reference, order, expected",
    [
        ("a b c d", "a b c d", 2, 100.0),
        ("a b c x", "a b c d", 2, 100 * math.sqrt(3 / 4 * 2 / 3)),  # p1 = 3/4, p2 = 2/3
        ("a b c x", "a b c d", 3, 100 * (3 / 4 * 2 / 3 * 1 / 2) ** (1 / 3)),  # p3 = 1/2
        ("a x b y", "a b c d", 2, 0.0),  # no bigram matches: unsmoothed BLEU is 0
        ("a b", "a b c d", 2, 100 * math.exp(1 - 4 / 2)),  # brevity penalty only
    ],
)
def test_sentence_bleu_by_hand(hypothesis, reference, order, expected):
    assert sentence_bleu(hypothesis, reference, order) == pytest.approx(expected, abs=1e-6)


def test_length_bins_are_equal_width_and_labelled_by_their_start():
    edges = length_bin_edges([1, 8, 3], 4)
    assert edges.tolist() == [1, 3, 5, 7, 9]
    assert length_bins([1, 2, 3, 4, 5, 6, 7, 8], edges).tolist() == [1, 1, 3, 3, 5, 5, 7, 7]


def test_shuffled_control_pairs_each_output_with_another_reference():
    generations = [{"hypothesis": f"w{i} x{i} y{i}", "reference": f"w{i} x{i} y{i}"} for i in range(20)]
    scores = sentence_scores(generations, orders=(2,), shuffle_seed=3)
    assert scores["bleu2"].tolist() == pytest.approx([100.0] * 20)
    assert (scores["bleu2_shuffled"] < 99).sum() >= 17  # a permutation of 20 leaves few fixed points


def test_bleu_by_length_on_hand_made_outputs():
    short_right = [{"hypothesis": "a b c", "reference": "a b c"}] * 6
    long_wrong = [{"hypothesis": "q r s t u v w x", "reference": "a b c d e f g h"}] * 6
    stats = bleu_by_length(short_right + long_wrong, length_bin_edges([3, 8], 2), orders=(2,), min_count=5, resamples=200)
    real = stats[stats["reference"] == "real"].set_index("length")
    assert real.loc[3, "mean"] == pytest.approx(100.0) and real.loc[3, "count"] == 6
    assert real.loc[6, "mean"] == pytest.approx(0.0)  # bins [3, 6) and [6, 9): the 8-word outputs
    assert set(stats["reference"]) == {"real", "shuffled"}
