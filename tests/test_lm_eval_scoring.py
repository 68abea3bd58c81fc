"""GSM8K scored as lm-evaluation-harness scores it (its gsm8k task: the strict-match and flexible-extract
filters, then exact_match with its ignored patterns), on crafted outputs and on the real references."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gold_textgen.evaluation import metrics
from gold_textgen.evaluation.final_answer import flexible_extract, strict_match
from gold_textgen.evaluation.scoring import score_generations
from gold_textgen.evaluation.stop_sequences import truncated_at_stop

REFERENCE = "Natalia sold 48/2 = 24 clips in May.\nNatalia sold 48+24 = 72 clips altogether.\n#### 72"
REAL_GSM8K = Path(__file__).resolve().parents[2] / "shared" / "real" / "gsm8k_train_sample" / "train_first500.jsonl"

# (output, strict-match, flexible-extract, this project's value comparison), as lm-eval's definitions give them
CASES = [
    ("She sold 72 clips.\n#### 72", True, True, True),
    ("#### 72\nQuestion: How many pens? Answer: ... #### 5", True, False, False),  # strict takes the first ####
    ("#### 72.0", False, False, True),  # compared as text after the ignored patterns: 72.0 is not 72
    ("#### 072", False, False, True),
    ("#### 72.", True, True, True),  # a trailing period is ignored
    ("#### 7,2", True, True, True),  # commas are ignored
    ("#### $72", False, True, True),  # strict wants digits right after "#### "; the last number is "$72" -> 72
    ("#### The answer is 72", False, True, True),
    ("So the total is 72.", False, True, True),  # no ####: strict has no answer, flexible the last number
    ("They sold 72 clips, then 5 more.", False, False, False),
    ("no number at all", False, False, False),
]


@pytest.mark.parametrize(("output", "strict", "flexible", "by_value"), CASES)
def test_crafted_outputs_score_as_lm_eval_scores_them(output, strict, flexible, by_value):
    assert strict_match(output, REFERENCE) is strict
    assert flexible_extract(output, REFERENCE) is flexible
    assert metrics.ANSWER_METRICS["exact_match"](output, REFERENCE) is by_value


def test_stop_sequences_end_an_output_as_lm_evals_until_does():
    stops = ["Question:", "</s>", "<|im_end|>"]
    assert truncated_at_stop("#### 72\nQuestion: next #### 5", stops) == "#### 72\n"
    assert truncated_at_stop("a</s>b<|im_end|>", stops) == "a"
    assert truncated_at_stop("no stop here", stops) == "no stop here" == truncated_at_stop("no stop here", [])
    # the second "####" of a run-on answer is gone, so every filter sees the first problem's answer
    cut = truncated_at_stop("#### 72\nQuestion: How many pens?\nAnswer: #### 5", stops)
    assert flexible_extract(cut, REFERENCE) and strict_match(cut, REFERENCE)


@pytest.mark.skipif(not REAL_GSM8K.is_file(), reason=f"the GSM8K sample is not at {REAL_GSM8K} (shared data folder)")
def test_the_references_score_one_hundred_percent_under_every_filter():
    references = [json.loads(line)["answer"] for line in REAL_GSM8K.read_text().splitlines()]
    for name in ("strict_match", "flexible_extract", "exact_match"):
        assert metrics.corpus_answer_metric(name, references, references) == 100.0, name


def test_every_score_file_holds_the_three_answer_metrics():
    rows = [{"hypothesis": output, "reference": REFERENCE} for output, *_ in CASES]
    scores = score_generations(rows, None, metrics.Scoring())
    for column, name in enumerate(("strict_match", "flexible_extract", "exact_match"), start=1):
        assert scores[name] == pytest.approx(100 * sum(case[column] for case in CASES) / len(CASES)), name
    assert (scores["strict_match"], scores["flexible_extract"], scores["exact_match"]) == pytest.approx((400 / 11, 600 / 11, 800 / 11))
