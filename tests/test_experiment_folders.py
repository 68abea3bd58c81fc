"""One experiment per folder: the name an overlay gives, the files a folder belongs to, and the refusal
of a run under other settings once the folder holds models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gold_textgen.bookkeeping import experiment_index
from gold_textgen.config.layers import name_sources

BASE = ("config.yaml", {"experiment": {"name": "demo"}})
SMOKE = ("configs/smoke.yaml", {"experiment": {"name": "smoke"}, "tasks": {}})


@pytest.mark.parametrize(
    ("layers", "name", "sources"),
    [
        ([BASE], "demo", ["config.yaml"]),
        ([BASE, SMOKE], "smoke", ["configs/smoke.yaml"]),
        # An unnamed overlay gets a folder of its own; --config and --set change settings only.
        ([BASE, SMOKE, ("/tmp/fast.yaml", {"tasks": {}}), ("--config", {"x": 1})], "smoke.fast", ["configs/smoke.yaml", "/tmp/fast.yaml"]),
        # An overlay that repeats its base's name is that experiment, changed on purpose.
        ([BASE, SMOKE, ("/tmp/more.yaml", {"experiment": {"name": "smoke"}})], "smoke", ["configs/smoke.yaml"]),
        # gold-textgen's --set file is no overlay of its own.
        ([BASE, SMOKE, (".snakemake/gold-textgen/smoke.0a.overrides.yaml", {"tasks": {}})], "smoke", ["configs/smoke.yaml"]),
        ([BASE, ("my.yaml", {}), ("b.yaml", {})], "my.b", ["my.yaml", "b.yaml"]),
        ([BASE, SMOKE, ("other.yaml", {"experiment": {"name": "other"}})], "other", ["other.yaml"]),
    ],
)
def test_the_name_and_the_files_an_experiment_comes_from(layers, name, sources):
    assert name_sources(layers) == (name, sources)


def test_config_files_are_labelled_relative_to_the_project(tmp_path, monkeypatch):
    project, elsewhere = tmp_path / "clone", tmp_path / "work"
    (project / "configs").mkdir(parents=True)
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    labels = experiment_index.source_labels([str(project / "configs" / "smoke.yaml"), "mine.yaml", "--config"], project)
    assert labels == ["configs/smoke.yaml", "mine.yaml", "--config"]
    outside = tmp_path / "other" / "x.yaml"
    assert experiment_index.source_labels([str(outside)], project) == [str(outside.resolve())]


def test_a_folder_with_models_refuses_other_settings_whatever_the_files(tmp_path, monkeypatch):
    monkeypatch.delenv(experiment_index.REPLACE_VARIABLE, raising=False)
    settings = {"experiment": {"name": "smoke", "seeds": [1]}, "tasks": {"demo": {"mle": {"learning_rate": 5e-4}}}}
    experiment_index.record_run(tmp_path, "smoke", None, ["configs/smoke.yaml"], [], "code", complete=True, settings=settings)
    other = {**settings, "tasks": {"demo": {"mle": {"learning_rate": 1e-3}}}}
    problem = experiment_index.ownership_problem(tmp_path, "smoke", ["configs/smoke.yaml"], other, holds_models=True)
    assert problem is not None
    assert "belongs to the experiment made by configs/smoke.yaml" in problem
    assert "tasks.demo.mle.learning_rate: 0.0005 -> 0.001" in problem
    assert "GOLD_TEXTGEN_REPLACE=smoke" in problem and "experiment.name of its own" in problem
    # The same settings from other files (or in another order), or a folder without models: allowed.
    same = json.loads(json.dumps(settings))
    assert experiment_index.ownership_problem(tmp_path, "smoke", ["copy_of_smoke.yaml"], same, holds_models=True) is None
    assert experiment_index.ownership_problem(tmp_path, "smoke", ["configs/smoke.yaml"], other, holds_models=False) is None
    # No record yet: nothing to protect by it.
    assert experiment_index.ownership_problem(tmp_path / "none", "smoke", ["x.yaml"], other, holds_models=True) is None
    # A record written before digests were kept is judged by its files.
    experiment_index.record_run(tmp_path / "old", "smoke", None, ["configs/smoke.yaml"], [], "code", complete=True)
    assert experiment_index.ownership_problem(tmp_path / "old", "smoke", ["configs/smoke.yaml"], other, holds_models=True) is None
    assert experiment_index.ownership_problem(tmp_path / "old", "smoke", ["copy.yaml"], other, holds_models=True) is not None
    # The explicit way to replace them names the experiment.
    monkeypatch.setenv(experiment_index.REPLACE_VARIABLE, "other")
    assert experiment_index.ownership_problem(tmp_path, "smoke", ["configs/smoke.yaml"], other, holds_models=True) is not None
    monkeypatch.setenv(experiment_index.REPLACE_VARIABLE, "smoke")
    assert experiment_index.ownership_problem(tmp_path, "smoke", ["configs/smoke.yaml"], other, holds_models=True) is None


def test_the_settings_digest_ignores_key_order_and_the_cost_model():
    one = experiment_index.owned_settings({"tasks": {"a": 1, "b": [1, 2]}, "cost": {"profile": "x"}, "analysis": {}})
    two = experiment_index.owned_settings({"analysis": {}, "tasks": {"b": (1, 2), "a": 1}, "cost": {"profile": "y"}})
    assert experiment_index.settings_digest(one) == experiment_index.settings_digest(two)
    assert experiment_index.differing_keys({"a": {"b": 1}}, {"a": {"b": 2, "c": 3}}) == [("a.b", 1, 2), ("a.c", "(not set)", 3)]


def test_a_record_says_current_only_after_a_run_that_built_every_target(tmp_path):
    config = tmp_path / "smoke.yaml"
    config.write_text("experiment: {name: smoke}\n")
    started = experiment_index.record_run(tmp_path, "smoke", None, ["smoke.yaml"], [config], "code", complete=None)
    assert started["finished"] is None and experiment_index.status(started, "code") == "running, or stopped before it finished"
    partial = experiment_index.record_run(tmp_path, "smoke", None, ["smoke.yaml"], [config], "code", complete=False)
    assert partial["started"] == started["started"] and experiment_index.status(partial, "code").startswith("partial")
    done = experiment_index.record_run(tmp_path, "smoke", None, ["smoke.yaml"], [config], "code", complete=True)
    assert experiment_index.status(done, "code") == "current"
    assert experiment_index.status(done, "other code") == "code changed since"
    config.write_text("experiment: {name: smoke, seeds: [2]}\n")
    assert experiment_index.status(done, "code") == "config changed since"
    assert json.loads(Path(tmp_path, "experiment.json").read_text())["sources"] == ["smoke.yaml"]


def test_a_config_edited_while_its_run_went_is_named_and_never_current(tmp_path):
    """The run read its config (`read_as`), then the file changed before the run ended: the record keeps the
    digest of the config as it was read, names the edited file, and never reads "current", not even once the
    file is edited back (the run's results are of the settings it read, which the record says)."""
    config = tmp_path / "smoke.yaml"
    config.write_text("tasks: {demo: {fine_tune: {learning_rate: 0.001}}}\n")
    read_as = experiment_index.file_digests([config])
    config.write_text("tasks: {demo: {fine_tune: {learning_rate: 0.002}}}\n")
    done = experiment_index.record_run(tmp_path, "smoke", None, ["smoke.yaml"], [config], "code", complete=True, read_as=read_as)
    assert done["config_edited_during_run"] == [str(config.resolve())]
    assert experiment_index.status(done, "code").startswith("config edited while its run went (smoke.yaml)")
    assert done["config_digest"] != experiment_index.config_digest([config])
    untouched = experiment_index.record_run(tmp_path, "smoke", None, ["smoke.yaml"], [config], "code", complete=True)
    assert untouched["config_edited_during_run"] == [] and experiment_index.status(untouched, "code") == "current"
