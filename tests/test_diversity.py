import math

import pytest

from gold_textgen.analysis.diversity import distinct_ngrams, diversity_row, input_overlap, ngrams

CORPUS = ["the cat sat", "the cat ran", "a dog sat"]


def test_ngrams():
    assert ngrams(["a", "b", "c"], 2) == [("a", "b"), ("b", "c")]
    assert ngrams(["a"], 2) == []


@pytest.mark.parametrize("order, expected", [(1, 6), (2, 5), (3, 3), (4, 0)])
def test_distinct_ngram_counts_on_a_tiny_corpus(order, expected):
    # unigrams: the cat sat ran a dog; bigrams: the-cat cat-sat cat-ran a-dog dog-sat
    assert distinct_ngrams(CORPUS, order) == expected


def test_input_overlap_counts_occurrences_copied_from_the_own_input():
    outputs = ["the cat sat", "x y"]
    inputs = ["the cat", "y z"]
    assert input_overlap(outputs, inputs, 1) == pytest.approx(3 / 5)  # the, cat, y
    assert input_overlap(outputs, inputs, 2) == pytest.approx(1 / 3)  # the-cat of the-cat, cat-sat, x-y
    assert math.isnan(input_overlap(["a"], ["a"], 2))


def test_diversity_row():
    row = diversity_row(CORPUS, CORPUS, 2)
    assert row == {"distinct_1": 6, "distinct_2": 5, "input_overlap_1": 1.0, "input_overlap_2": 1.0, "mean_words": 3.0}
