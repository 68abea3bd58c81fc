"""The data set checks of rule verify_dataset (pairs shared between splits, expected sizes), and which
source settings reach the training splits (config.views.training_source_view)."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path

import pytest
import yaml

from gold_textgen.config.layers import merged_config
from gold_textgen.config.schema import defaults, validate_config
from gold_textgen.config.views import training_source_view, training_view, verification_view
from gold_textgen.data.prepare import (
    AnswerFormatError,
    SplitOverlapError,
    check_overlaps,
    prepare_dataset,
    split_overlaps,
    verify_dataset,
)

REPO = Path(__file__).resolve().parents[1]


def pairs(*texts: str) -> list[dict]:
    return [{"id": str(i), "source": text, "target": text.upper()} for i, text in enumerate(texts)]


def test_shared_pairs_are_counted_per_held_out_split():
    splits = {"train": pairs("a", "b", "c"), "valid": pairs("a", "d"), "test": pairs("a", "d", "e", "f")}
    assert split_overlaps(splits) == [("valid", "train", 1, 2), ("test", "train", 1, 4), ("test", "valid", 2, 4)]
    same_source = {"train": pairs("a"), "valid": [{"id": "0", "source": "a", "target": "other"}]}
    assert split_overlaps(same_source) == [("valid", "train", 0, 1)]  # a pair is source and target together


def test_too_many_shared_pairs_stop_with_the_counts_and_the_setting(caplog):
    caplog.set_level(logging.INFO)
    splits = {"train": pairs("a", "b", "c"), "valid": pairs("x", "y"), "test": pairs("a", "e", "f", "g")}
    check_overlaps("demo", splits, max_share=0.25)  # 1 of 4 test pairs: 25% is allowed
    assert "1 of 4 test pairs (25.0%) also occur in train" in caplog.text
    with pytest.raises(
        SplitOverlapError, match=r"task demo: 1 of the 4 test pairs \(25.0%\) also occur in the train split.*max_split_overlap"
    ):
        check_overlaps("demo", splits, max_share=0.2)


def test_a_task_scored_by_final_answers_needs_references_that_state_them(tmp_path):
    """exact_match on a local translation corpus: the data checks stop it before any table (the answer
    metrics would score 0 for every model); GSM8K-style references pass."""
    translation = {split: pairs("ein haus", "zwei katzen", "drei 3") for split in ("train", "valid", "test")}
    prepared = {}
    for split, records in translation.items():
        prepared[split] = tmp_path / f"{split}.jsonl"
        prepared[split].write_text("".join(json.dumps(record) + "\n" for record in records))
    checks = {"max_split_overlap": 1.0, "answer_metric": "exact_match"}
    with pytest.raises(AnswerFormatError, match=r"task demo: .* only 0 of the 3 valid references state one; choose bleu"):
        verify_dataset(checks, prepared, tmp_path / "checks.json", task="demo")
    solved = [{"id": str(i), "source": f"q{i}", "target": f"so {i} + 1 = {i + 1}\n#### {i + 1}"} for i in range(3)]
    for split in prepared:
        prepared[split].write_text("".join(json.dumps(record) + "\n" for record in solved))
    assert verify_dataset(checks, prepared, tmp_path / "checks.json", task="demo")["sizes"]["valid"] == 3


def test_one_file_for_every_split_is_refused_by_the_checks(tmp_path):
    """A local source given one file for train, valid and test is refused when the config is read
    (setting_relations); the data checks would refuse the same data from three copies of the file."""
    (tmp_path / "all.tsv").write_text("a b\tx y\nc\tz\n")
    source = {"kind": "local", "format": "tsv", "train": "all.tsv", "valid": "all.tsv", "test": "all.tsv", "max_split_overlap": 0.05}
    outputs = {split: tmp_path / f"{split}.jsonl" for split in ("train", "valid", "test")}
    prepare_dataset(source, outputs, base_dir=tmp_path)
    with pytest.raises(SplitOverlapError, match="2 of the 2 valid pairs"):
        verify_dataset(verification_view(source), outputs, tmp_path / "checks.json")
    report = verify_dataset(
        {**verification_view(source), "max_split_overlap": 1.0, "expected_sizes": {"test": 3}}, outputs, tmp_path / "c.json"
    )
    assert report["sizes"] == {"train": 2, "valid": 2, "test": 2} and "split test: 2 examples" in report["size_warnings"][0]
    assert json.loads((tmp_path / "c.json").read_text())["shared_pairs"][0] == {"split": "valid", "with": "train", "shared": 2, "of": 2}


@pytest.mark.slow
def test_the_demo_languages_splits_share_few_pairs():
    """The shipped synthetic tasks pass the default max_split_overlap (5%)."""
    from gold_textgen.data.demo_task import DemoTaskSpec, generate_split

    for name in ("config.yaml", "configs/smoke.yaml", "configs/objectives.yaml", "configs/causal_demo.yaml"):
        overlays = [] if name == "config.yaml" else [REPO / name]
        source = validate_config(merged_config(REPO / "config.yaml", overlays))["tasks"]["demo"]["source"]
        spec = DemoTaskSpec.from_config(source)
        check_overlaps("demo", {split: generate_split(spec, split) for split in ("train", "valid", "test")}, source["max_split_overlap"])


SOURCES = {
    "synthetic": (defaults("synthetic_source", kind="synthetic"), ["num_test"]),
    "local": ({"kind": "local", "format": "tsv", "train": "a.tsv", "valid": "b.tsv", "test": "c.tsv"}, ["test"]),
    "huggingface": (defaults("huggingface_source", kind="huggingface", path="cnn_dailymail"), ["splits.test"]),
    "nqg": (defaults("nqg_source", kind="nqg_zhou2017", url="file:///r.zip", line_ranges={"train": [1, 9], "test": [10, 12]}), []),
}


def changed(source: dict, key: str) -> dict:
    source = copy.deepcopy(source)
    *parents, last = key.split(".")
    node = source
    for part in parents:
        node = node[part]
    value = node.get(last)
    node[last] = (
        f"{value}-changed"
        if isinstance(value, str)
        else {"test": 99}
        if isinstance(value, dict)
        else [v + 1 for v in value]
        if isinstance(value, list)
        else (value or 0) + 7
    )
    return source


@pytest.mark.parametrize("kind", SOURCES)
def test_test_only_and_verification_settings_leave_the_training_view_alone(kind):
    source, test_only = SOURCES[kind]
    keys = [*test_only, "expected_sizes", "max_split_overlap", "checksum", "url"]
    if kind == "nqg":
        keys += ["prefixes.test", "line_ranges.test"]
    for key in keys:
        edited = changed({**source, "expected_sizes": {"test": 5}}, key)
        assert training_source_view(edited) == training_source_view({**source, "expected_sizes": {"test": 5}}), key
    trained = "num_train" if kind == "synthetic" else {"local": "train", "huggingface": "splits.train", "nqg": "line_ranges.train"}[kind]
    assert training_source_view(changed(source, trained)) != training_source_view(source)


def test_nqgs_sentence_split_test_size_changes_the_training_split():
    """Its test groups are carved first: their size decides which sentences are left for training."""
    source = defaults("nqg_source", kind="nqg_zhou2017", directory="d", sentence_split={"valid": 5, "test": 5})
    assert training_source_view(changed(source, "sentence_split.test")) != training_source_view(source)


def test_the_papers_checksums_urls_and_sizes_are_not_in_any_models_identity():
    config = validate_config(merged_config(REPO / "config.yaml", [REPO / "configs/paper.yaml"]))
    for name, task in config["tasks"].items():
        view = yaml.safe_dump(training_view({"name": name, **task}, "mle"))
        for key in ("checksum", "expected_sizes", "max_split_overlap", "url"):
            assert f"{key}:" not in view, (name, key)
