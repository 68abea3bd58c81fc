"""GSM8K: final-answer extraction and exact match (known answers, and every real problem of the shared
sample), and the source reader (the real `datasets` loading code on the sample in the release's format:
the dev split carved from train, the prompt template, calculator annotations)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from gold_textgen.config.schema import defaults
from gold_textgen.data.sources import load_source_splits
from gold_textgen.data.sources.gsm8k import solution_text
from gold_textgen.evaluation import metrics
from gold_textgen.evaluation.final_answer import answers_match, canonical_number, final_answer

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "real" / "gsm8k_train_sample" / "train_first500.jsonl"
needs_sample = pytest.mark.skipif(not SAMPLE.is_file(), reason=f"the GSM8K sample is not at {SAMPLE} (shared data folder)")


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("Natalia sold 48+24 = 72 clips.\n#### 72", "72"),
        ("She pays $1,250 in all.\n#### 1,250", "1250"),
        ("#### $5.50", "5.5"),
        ("#### 10.0", "10"),
        ("#### -3", "-3"),
        ("It is 3 then 4.\n#### 12 apples", "12"),
        ("no mark: first 3, at last 7.", "7"),  # without ####, the last number
        ("#### seven", None),
        ("no number at all", None),
    ],
)
def test_the_final_answer_is_the_number_after_the_last_mark(text, answer):
    assert final_answer(text) == answer


def test_exact_match_compares_final_answers_by_value():
    references = ["a\n#### 1,000", "b\n#### 5", "c\n#### 2.5", "d\n#### 7"]
    hypotheses = ["x\n#### 1000", "y\n#### 6", "z 2.50", "no answer"]
    assert metrics.exact_match_per_example(hypotheses, references).tolist() == [100.0, 0.0, 100.0, 0.0]
    assert metrics.task_metric("exact_match", hypotheses, references) == 50.0
    assert metrics.sentence_rewards("exact_match", hypotheses, references).tolist() == [1.0, 0.0, 1.0, 0.0]
    assert not answers_match("#### 5", "no reference answer")


@needs_sample
def test_every_real_solution_has_its_answer_after_the_mark_with_or_without_annotations():
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    assert final_answer(rows[0]["answer"]) == "72" and final_answer(rows[1]["answer"]) == "10"
    annotated = 0
    for row in rows:
        written = canonical_number(row["answer"].rsplit("####", 1)[1].strip())
        stripped = solution_text(row["answer"], "strip")
        assert "<<" not in stripped and ">>" not in stripped
        assert written is not None and final_answer(row["answer"]) == final_answer(stripped) == written
        assert answers_match(stripped, row["answer"])
        annotated += "<<" in row["answer"]
    assert annotated > 400  # nearly every solution holds calculator annotations
    assert solution_text("48/2 = <<48/2=24>>24 clips", "strip") == "48/2 = 24 clips"
    assert solution_text("48/2 = <<48/2=24>>24 clips", "keep") == "48/2 = <<48/2=24>>24 clips"


@needs_sample
def test_the_reader_carves_the_dev_split_from_train_and_fills_the_template():
    source = defaults("gsm8k_source", kind="gsm8k", path="json", name=None, revision=None, valid_size=50, valid_seed=3)
    source["data_files"] = {"train": str(SAMPLE), "test": str(SAMPLE)}
    splits = load_source_splits(source, ["train", "valid", "test"])
    assert (len(splits["train"]), len(splits["valid"]), len(splits["test"])) == (450, 50, 500)
    train_ids, valid_ids = {r["id"] for r in splits["train"]}, {r["id"] for r in splits["valid"]}
    assert not train_ids & valid_ids and len(train_ids | valid_ids) == 500
    assert valid_ids == {r["id"] for r in load_source_splits(source, ["valid"])["valid"]}  # the same draw every time
    first = splits["test"][0]
    assert first["source"].startswith("Question: Natalia sold clips") and first["source"].endswith("\nAnswer:")
    assert first["target"].endswith("#### 72") and "<<" not in first["target"]


def test_the_gsm8k_config_fine_tunes_the_base_model_three_epochs_and_stops_on_rises_above_the_dev_noise():
    """configs/causal.yaml as its comments state it: the pretrained (-Base) model, not the chat model; SFT
    for three epochs of the training problems; an early-stopping threshold of at least one standard error
    of accuracy on the dev problems (at 40%), so noise alone does not count as a rise."""
    task = yaml.safe_load((Path(__file__).resolve().parents[1] / "configs" / "causal.yaml").read_text())["tasks"]["gsm8k"]
    assert task["model"]["name_or_path"].endswith("-Base")
    sft = task["mle"]
    epochs = sft["max_steps"] * sft["batch_size"] * sft["gradient_accumulation_steps"] / task["source"]["expected_sizes"]["train"]
    assert 2.95 <= epochs <= 3.05, epochs
    standard_error = 100 * math.sqrt(0.4 * 0.6 / task["source"]["valid_size"])
    for stage in ("mle", "fine_tune"):
        assert task[stage]["early_stopping_threshold"] >= 0.9 * standard_error
        assert task[stage]["eval_max_examples"] == task["source"]["valid_size"]  # selection on every dev problem
