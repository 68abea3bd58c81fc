from collections import Counter

import pytest
from settings import demo_spec

from gold_textgen.data.demo_task import DemoTaskSpec, build_lexicon, generate_split
from gold_textgen.runtime.errors import ConfigError


@pytest.fixture(scope="module")
def spec():
    return demo_spec(seed=7, num_train=3000, num_valid=300, num_test=300)


@pytest.fixture(scope="module")
def train(spec):
    """The train split, generated once for the tests that only read it."""
    return generate_split(spec, "train")


def test_same_seed_gives_identical_splits(spec, train):
    assert generate_split(spec, "train") == train


def test_other_seed_gives_other_data(spec):
    other = demo_spec(seed=8, num_train=3000, num_valid=300, num_test=300)
    assert generate_split(spec, "test") != generate_split(other, "test")


def test_split_streams_are_independent_of_other_split_sizes(spec):
    bigger_train = demo_spec(seed=7, num_train=5000, num_valid=300, num_test=300)
    assert generate_split(spec, "test") == generate_split(bigger_train, "test")


def test_sloppy_share_matches_config_exactly(spec, train):
    assert sum(r["sloppy"] for r in train) == round(spec.sloppy_share * spec.num_train)
    assert all(r["num_edits"] >= 1 for r in train if r["sloppy"])
    assert all(r["num_edits"] == 0 for r in train if not r["sloppy"])


@pytest.mark.parametrize("split", ["valid", "test"])
def test_evaluation_references_are_clean_by_default(spec, split):
    assert not any(r["sloppy"] for r in generate_split(spec, split))


def test_lengths_stay_within_bounds(spec, train):
    lengths = [len(r["source"].split()) for r in train]
    assert min(lengths) == spec.min_length and max(lengths) == spec.max_length
    clean_targets = [r for r in generate_split(spec, "test")]
    # Clean translation is word for word: the target has as many words as the source.
    assert all(len(r["target"].split()) == len(r["source"].split()) for r in clean_targets)


def test_synonym_choices_follow_the_skewed_distribution(spec):
    lexicon = build_lexicon(spec)
    rank_of = {target: rank for synonyms in lexicon.synonyms.values() for rank, target in enumerate(synonyms)}
    ranks = Counter(rank_of[word] for r in generate_split(spec, "test") for word in r["target"].split())
    total = sum(ranks.values())
    for rank, expected in enumerate(spec.synonym_probs):
        assert ranks[rank] / total == pytest.approx(expected, abs=0.02)


def test_adjective_noun_pairs_are_reordered():
    spec = demo_spec(
        seed=1, num_train=1, num_valid=200, num_test=1, synonym_probs=[1.0], adjective_prob=1.0, chunk_probs=[0.98, 0.01, 0.01]
    )
    lexicon = build_lexicon(spec)
    adjectives = set(lexicon.words_by_class["adjective"])
    translate = {source: synonyms[0] for source, synonyms in lexicon.synonyms.items()}
    swapped = 0
    for record in generate_split(spec, "valid"):
        source, target = record["source"].split(), record["target"].split()
        for i in range(len(source) - 1):
            if source[i] in adjectives and target[i] == translate[source[i + 1]]:
                assert target[i + 1] == translate[source[i]]
                swapped += 1
    assert swapped > 100


def test_sloppy_references_differ_from_clean_translation():
    spec = demo_spec(seed=3, num_train=500, synonym_probs=[1.0], sloppy_share=1.0, sloppy_edit_rate=0.3)
    clean = demo_spec(seed=3, num_train=500, synonym_probs=[1.0], sloppy_share=0.0)
    noisy, tidy = generate_split(spec, "train"), generate_split(clean, "train")
    assert [r["source"] for r in noisy] == [r["source"] for r in tidy]
    assert all(n["target"] != t["target"] for n, t in zip(noisy, tidy, strict=True))


@pytest.mark.parametrize(
    ("bad", "key"),
    [(dict(sloppy_share=1.5), "sloppy_share"), (dict(vocab_size=3), "vocab_size"), (dict(class_shares=[0.5, 0.5]), "class_shares")],
)
def test_out_of_range_settings_are_rejected_by_the_schema(bad, key):
    with pytest.raises(ConfigError, match=key):
        demo_spec(**bad)


def test_a_partial_source_is_refused_rather_than_completed_silently():
    with pytest.raises(ValueError, match="lacks"):
        DemoTaskSpec.from_config({"seed": 1})
