"""FocusSeq2Seq's halve-on-plateau learning-rate schedule: the rule on hand-made dev curves, and a run
interrupted after a halving that resumes to the uninterrupted run's rates, losses and model."""

import json

import pytest
from conftest import REPO, tiny_task
from settings import TINY_MODEL
from test_training import CrashAfterCheckpoint, run_job, training_losses

from gold_textgen.training.plateau_schedule import PlateauHalving
from gold_textgen.training.training_job import TrainingJob


def factors(curve, patience=3, learning_rate=1e-3, min_learning_rate=1e-6):
    schedule = PlateauHalving(learning_rate, warmup_steps=0, patience=patience, min_learning_rate=min_learning_rate)
    seen = []
    for step, value in enumerate(curve, start=1):
        schedule.observe(step, value)
        seen.append(schedule(step))
    return seen, schedule.halvings


def test_the_rate_halves_after_three_evaluations_without_improvement_and_after_each_further_one():
    # FocusSeq2Seq's train.py: the counter is not reset by a halving, only by an improvement
    seen, halvings = factors([10, 11, 11, 10, 9, 8, 12, 12, 12, 11])
    assert seen == [1, 1, 1, 1, 0.5, 0.25, 0.25, 0.25, 0.25, 0.125]
    assert halvings == [5, 6, 10]


def test_no_halving_below_the_minimum_rate_and_warmup_comes_first():
    seen, _ = factors([5] * 6, patience=1, learning_rate=4e-6, min_learning_rate=1e-6)
    assert seen == [1, 0.5, 0.25, 0.125, 0.125, 0.125]  # 4e-6 -> 2e-6 -> 1e-6 -> 5e-7, then no more
    warming = PlateauHalving(1e-3, warmup_steps=4, patience=3, min_learning_rate=1e-6)
    assert [warming(step) for step in range(5)] == pytest.approx([0.25, 0.5, 0.75, 1.0, 1.0])


def learning_rates(model_dir):
    return [(e["step"], e["learning_rate"]) for e in json.loads((model_dir / "log_history.json").read_text()) if "learning_rate" in e]


@pytest.mark.slow
def test_an_interrupted_run_resumes_with_the_halvings_it_had(tiny_data, tmp_path):
    data_dir, tokenizer = tiny_data
    (tmp_path / "tok").mkdir()
    tokenizer.save_pretrained(tmp_path / "tok")
    task = tiny_task({**TINY_MODEL, "dropout": 0.1})
    # patience 1: every evaluation that does not beat the best halves the rate
    task["mle"].update(max_steps=10, eval_steps=2, lr_scheduler="halve_on_plateau", halving_patience=1, early_stopping_patience=None)
    base = TrainingJob(
        task, "mle", 1, data_dir / "train.jsonl", data_dir / "valid.jsonl", tmp_path / "tok", tmp_path / "unused", tmp_path / "c", REPO
    )
    straight = run_job(base, None, "mle", "straight")
    rates = learning_rates(straight)
    assert len({rate for step, rate in rates if step > 4}) > 1  # it halved after update 4
    with pytest.raises(RuntimeError, match="killed after checkpoint-6"):
        run_job(base, None, "mle", "interrupted", callbacks=(CrashAfterCheckpoint(6),))
    resumed = run_job(base, None, "mle", "interrupted")
    assert json.loads((resumed / "provenance.json").read_text())["resumed_from"] == "checkpoint-6"
    assert learning_rates(resumed) == rates
    assert training_losses(resumed) == training_losses(straight)
    assert (resumed / "model.safetensors").read_bytes() == (straight / "model.safetensors").read_bytes()
