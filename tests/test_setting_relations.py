"""Settings that pass the schema one by one but not together, and YAML that parses but means something
else: clear errors when the config is read, each naming the key (or the file and line)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from conftest import shipped_layers

from gold_textgen.config.layers import config_layers
from gold_textgen.config.schema import validate_config
from gold_textgen.config.strict_yaml import load_strict
from gold_textgen.runtime.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def config():
    return yaml.safe_load((REPO / "config.yaml").read_text())


def refused(config: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        validate_config(copy.deepcopy(config))


def test_a_key_written_twice_names_both_lines(tmp_path):
    text = "tasks:\n  demo:\n    mle:\n      learning_rate: 0.001\n    gold: {}\n    mle:\n      batch_size: 8\n"
    with pytest.raises(ConfigError, match=r"c\.yaml:6: key 'mle' is written twice in one mapping \(first at line 3\)"):
        load_strict(text, "c.yaml")
    overlay = tmp_path / "twice.yaml"
    overlay.write_text("objectives:\n  gold_s: {reward: s}\n  gold_s: {reward: p}\n")
    with pytest.raises(ConfigError, match=r"twice\.yaml:3: key 'gold_s'"):
        config_layers(REPO / "config.yaml", [overlay])


def test_a_seed_with_a_leading_zero_is_not_read_as_octal():
    with pytest.raises(ConfigError, match=r"s\.yaml:1: '010' has a leading zero, which YAML reads as an octal number \(8\)"):
        load_strict("seeds: [010]\n", "s.yaml")
    assert load_strict("seeds: [0, 10]\nrate: 0.05\n", "s.yaml") == {"seeds": [0, 10], "rate": 0.05}


def test_an_exponent_without_a_dot_suggests_how_to_write_the_number(config):
    config["tasks"]["demo"]["mle"]["learning_rate"] = "1e-3"  # what YAML 1.1 makes of `1e-3`
    refused(config, r"learning_rate: '1e-3' is not of type 'number' \(YAML reads '1e-3' as text; write 1\.0e-3 for the number\)")


def test_seeds_must_fit_numpys_32_bits(config):
    config["experiment"]["seeds"] = [2**32]
    refused(config, r"experiment\.seeds\.0: 4294967296 is greater than the maximum of 4294967295")


def test_dropout_of_one_is_refused(config):
    config["tasks"]["demo"]["model"]["dropout"] = 1.0
    refused(config, r"model\.dropout: 1\.0 is greater than or equal to the maximum of 1")


def test_minimum_output_length_above_the_maximum(config):
    config["tasks"]["demo"]["generation"].update(min_new_tokens=50, max_new_tokens=20)
    refused(config, r"generation\.min_new_tokens: generation asks for at least 50 new tokens but at most 20")
    config["tasks"]["demo"]["generation"].update(min_new_tokens=1)
    config["tasks"]["demo"]["decoder_overrides"] = {"greedy": {"min_new_tokens": 30}}
    refused(config, r"decoders\.greedy .*at least 30 new tokens but at most 20")


def test_warmup_longer_than_training(config):
    config["tasks"]["demo"]["mle"].update(warmup_steps=500, max_steps=400)
    refused(config, r"tasks\.demo\.mle\.warmup_steps: 500 warm-up updates exceed max_steps \(400\)")


def test_a_lagged_policy_never_resynced(config):
    config["tasks"]["demo"].setdefault("fine_tune", {}).update(max_steps=300, sync_every=500, warmup_steps=10)
    refused(config, r"objectives\.gold_\w+\.\(fine_tune\.sync_every\): the lagged policy is re-synced every 500 updates, more than .*300")
    config["tasks"]["demo"]["fine_tune"]["sync_each_epoch"] = True  # then it is re-synced every epoch anyway
    validate_config(copy.deepcopy(config))


def test_lengths_beyond_the_position_table(config):
    config["tasks"]["demo"]["model"]["max_position_embeddings"] = 40
    config["tasks"]["demo"].update(max_source_length=64, max_target_length=32)
    refused(config, r"model\.max_position_embeddings: 40 positions, but max_source_length needs 64")
    config["tasks"]["demo"].update(max_source_length=32)
    config["tasks"]["demo"]["generation"]["max_new_tokens"] = 39
    refused(config, r"but generation\.max_new_tokens needs 41")


def test_one_file_for_two_splits_of_a_local_source(config):
    config["tasks"]["demo"]["source"] = {
        "kind": "local",
        "format": "tsv",
        "train": "d/all.tsv",
        "valid": "d/dev.tsv",
        "test": "d/./all.tsv",
    }
    refused(config, r"tasks\.demo\.source\.test: reads d/\./all\.tsv, the file of split train too")


def test_every_shipped_config_passes_the_relations():
    for path in sorted((REPO / "configs").glob("*.yaml")):
        from gold_textgen.config.layers import merged_config

        validate_config(merged_config(REPO / "config.yaml", shipped_layers(path.name)))


def test_an_experiment_that_extends_itself_is_refused(config):
    config["experiment"].update(name="ext", extends="ext")
    refused(config, r"experiment\.extends: 'ext' is this experiment's own name")
