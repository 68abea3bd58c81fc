"""Known answers for dividing one file among train / dev / test by whole groups of equal inputs."""

import pytest

from gold_textgen.data.sources.grouped_split import grouped_split

# Five sentences asked 3, 1, 2, 1, 3 times (indices 0-9).
KEYS = ["a", "a", "b", "c", "c", "a", "d", "e", "e", "e"]


def test_every_pair_goes_to_one_split_and_no_input_to_two():
    chosen = grouped_split(KEYS, {"valid": 2, "test": 2}, seed=0)
    assert sorted(chosen["train"] | chosen["valid"] | chosen["test"]) == list(range(len(KEYS)))
    assert not (chosen["train"] & chosen["valid"] or chosen["train"] & chosen["test"] or chosen["valid"] & chosen["test"])
    inputs = {split: {KEYS[i] for i in indices} for split, indices in chosen.items()}
    assert not (inputs["train"] & inputs["valid"] or inputs["train"] & inputs["test"] or inputs["valid"] & inputs["test"])
    # whole groups: a held-out split reaches its size with at most one group's excess
    assert 2 <= len(chosen["test"]) <= 4 and 2 <= len(chosen["valid"]) <= 4


def test_the_draw_is_fixed_by_the_seed_and_changes_with_it():
    assert grouped_split(KEYS, {"valid": 2, "test": 2}, seed=3) == grouped_split(KEYS, {"valid": 2, "test": 2}, seed=3)
    draws = {tuple(sorted(grouped_split(KEYS, {"valid": 1, "test": 1}, seed=seed)["test"])) for seed in range(20)}
    assert len(draws) > 1


def test_distinct_inputs_split_like_a_plain_draw():
    """Every input once: test and valid hold exactly their sizes."""
    chosen = grouped_split([str(i) for i in range(10)], {"valid": 3, "test": 2}, seed=1)
    assert [len(chosen[s]) for s in ("train", "valid", "test")] == [5, 3, 2]


def test_sizes_that_leave_no_training_data_are_refused():
    with pytest.raises(ValueError, match="none is left for training"):
        grouped_split(KEYS, {"valid": 4, "test": 6}, seed=0)
    with pytest.raises(ValueError, match=r"10 pairs \(5 distinct inputs\) cannot give test 8 and valid 8"):
        grouped_split(KEYS, {"valid": 8, "test": 8}, seed=0)
