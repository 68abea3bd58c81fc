"""No fine-tuning from an MLE run that its step cap stopped while it still improved, unless the experiment
allows it; then every table marks the rows built on it."""

import json
import logging

import pandas as pd
import pytest
import yaml

from gold_textgen.analysis.training_marks import COLUMN, KEPT_FIRST, Marks, note, training_marks, with_training_marks
from gold_textgen.bookkeeping.convergence import UnconvergedStart, require_converged_start, run_summary


def finished_run(folder, dev_bleu, cap, best_step=None, global_step=None):
    """A model folder as run_and_save writes it: one dev evaluation every 100 updates."""
    folder.mkdir(parents=True)
    steps = [100 * (i + 1) for i in range(len(dev_bleu))]
    best = best_step or steps[max(range(len(dev_bleu)), key=lambda i: (dev_bleu[i], -i))]
    history = [{"step": step, "eval_bleu": value} for step, value in zip(steps, dev_bleu, strict=True)]
    (folder / "log_history.json").write_text(json.dumps(history))
    provenance = {"metric": "bleu", "best_checkpoint": f"checkpoint-{best}", "global_step": global_step or steps[-1]}
    (folder / "provenance.json").write_text(json.dumps(provenance))
    (folder / "resolved_config.yaml").write_text(yaml.safe_dump({"training": {"max_steps": cap}}))
    return folder


def test_a_run_stopped_by_its_cap_at_its_best_evaluation_stops_fine_tuning_with_the_fixes(tmp_path):
    run = finished_run(tmp_path / "results/models/demo/mle/seed2", [10.0, 12.5, 13.0, 14.25, 15.5], cap=500)
    assert run_summary(run)["still_improving"]
    with pytest.raises(UnconvergedStart) as stopped:
        require_converged_start(run, starts_from_mle=True, allowed=False)
    message = str(stopped.value)
    assert str(run) in message and "12.50 at 200, 13.00 at 300, 14.25 at 400, 15.50 at 500" in message
    assert "mle.max_steps" in message and "halve_on_plateau" in message and "allow_unconverged_mle: true" in message


def test_allowed_it_warns_and_a_converged_or_non_mle_start_passes_silently(tmp_path, caplog):
    improving = finished_run(tmp_path / "improving", [10.0, 12.0], cap=200)
    with caplog.at_level(logging.WARNING):
        require_converged_start(improving, starts_from_mle=True, allowed=True)
    assert "still improving" in caplog.text and "allowed by experiment.allow_unconverged_mle" in caplog.text
    require_converged_start(improving, starts_from_mle=False, allowed=False)  # GOLD+PG from GOLD-s: checked there
    early_stopped = finished_run(tmp_path / "early", [10.0, 12.0, 11.0, 11.5], cap=1000)
    plateaued_at_cap = finished_run(tmp_path / "plateau", [10.0, 12.0, 11.0, 11.5], cap=400)
    for run in (early_stopped, plateaued_at_cap):
        assert not run_summary(run)["still_improving"]
        require_converged_start(run, starts_from_mle=True, allowed=False)


def test_tables_mark_the_rows_of_seeds_whose_mle_was_still_improving(tmp_path):
    summary = pd.DataFrame(
        {"objective": ["mle", "mle", "gold_s", "mle"], "seed": [1, 2, 1, 3], "still_improving": [True, False, True, True]}
    )
    summary.to_csv(tmp_path / "demo.csv", index=False)
    pd.DataFrame({"objective": ["mle"], "seed": [1], "still_improving": [False]}).to_csv(tmp_path / "other.csv", index=False)
    marks = training_marks({"demo": tmp_path / "demo.csv", "other": tmp_path / "other.csv"})
    assert marks.mle_unconverged == {"demo": [1, 3]}  # GOLD-s still improving at its own cap is not an unconverged start
    table = pd.DataFrame({"task": ["demo"] * 4 + ["other"], "seed": ["1", "2", "3", "mean", "1"]})
    assert with_training_marks(table, marks)[COLUMN].tolist() == ["yes", "", "yes", "1, 3", ""]
    per_objective = pd.DataFrame({"task": ["demo", "other"], "objective": ["gold_s", "gold_s"]})
    assert with_training_marks(per_objective, marks)[COLUMN].tolist() == ["1, 3", ""]
    assert "demo: seed 1, 3" in note(marks) and note(Marks()) == "" and marks.columns == [COLUMN]


def test_a_run_whose_dev_metric_never_improved_is_not_converged(tmp_path):
    """A dev metric of 0 at every evaluation: early stopping ends the run, but it learned nothing."""
    flat = finished_run(tmp_path / "results/models/demo/mle/seed1", [0.0, 0.0, 0.0, 0.0], cap=5000)
    summary = run_summary(flat)
    assert summary["never_improved"] and not summary["still_improving"] and not summary["converged"]
    with pytest.raises(UnconvergedStart, match=r"never improved.*0\.00 at update 100"):
        require_converged_start(flat, starts_from_mle=True, allowed=False)
    worse = finished_run(tmp_path / "worse", [5.0, 4.0, 3.0], cap=5000)
    assert run_summary(worse)["never_improved"]
    learned = finished_run(tmp_path / "learned", [0.0, 0.5, 0.4], cap=5000)
    assert run_summary(learned)["converged"]


def test_tables_mark_the_rows_of_seeds_whose_mle_never_improved(tmp_path):
    frame = {"objective": ["mle", "mle"], "seed": [1, 2], "still_improving": [False, False], "never_improved": [True, False]}
    frame["converged"] = [False, True]
    pd.DataFrame(frame).to_csv(tmp_path / "summary.csv", index=False)
    assert training_marks({"demo": tmp_path / "summary.csv"}).mle_unconverged == {"demo": [1]}


def test_a_fine_tuning_run_that_kept_its_first_model_is_marked_in_every_table(tmp_path):
    """Dev BLEU at its ceiling from the first evaluation: early stopping ends the run at once and it keeps the
    model of update 50; the tables say so beside its rows, as they mark an unconverged MLE."""
    stuck = finished_run(tmp_path / "models/demo/gold_s/seed2", [46.9, 46.7, 46.8], cap=1500, global_step=150)
    summary = run_summary(stuck)
    assert summary["kept_first"] and summary["never_improved"] and not summary["converged"]
    frame = pd.DataFrame(
        {"objective": ["mle", "gold_s", "gold_s", "mle_continued"], "seed": [1, 1, 2, 2], "converged": [True, True, False, True]}
    )
    frame["kept_first"] = [False, False, True, False]
    frame.to_csv(tmp_path / "summary.csv", index=False)
    marks = training_marks({"demo": tmp_path / "summary.csv"})
    assert marks.kept_first == {"demo": {"gold_s": [2]}} and marks.mle_unconverged == {} and marks.columns == [KEPT_FIRST]
    table = pd.DataFrame({"task": "demo", "objective": ["gold_s", "gold_s", "gold_s", "mle"], "seed": ["1", "2", "mean", "mean"]})
    assert with_training_marks(table, marks)[KEPT_FIRST].tolist() == ["", "yes", "2", ""]
    assert "First model kept (column `kept_first_model`)" in note(marks) and "demo gold_s: seed 2" in note(marks)


def test_a_fixed_budget_run_keeps_its_last_model_and_a_rise_within_the_threshold_is_noise(tmp_path):
    """keep: last (the demo's fine-tuning): the kept model is the one after max_steps, so a dev metric that
    never moved leaves it converged; at the cap, only a last rise beyond early_stopping_threshold is a run
    still improving."""
    fixed = finished_run(tmp_path / "fixed", [46.9, 46.7], cap=200)
    provenance = json.loads((fixed / "provenance.json").read_text())
    (fixed / "provenance.json").write_text(json.dumps({**provenance, "kept": "last"}))
    summary = run_summary(fixed)
    assert summary["selected_step"] == 200 and not summary["kept_first"] and summary["never_improved"] and summary["converged"]
    for rise, improving in ((0.2, False), (0.5, True)):
        run = finished_run(tmp_path / f"rise{rise}", [46.0, 46.5, 46.5 + rise], cap=300)
        (run / "resolved_config.yaml").write_text(yaml.safe_dump({"training": {"max_steps": 300, "early_stopping_threshold": 0.3}}))
        assert run_summary(run)["still_improving"] is improving


def test_an_imported_model_is_marked_in_every_table_and_claim(tmp_path):
    """`imported`: `yes` on each row of an imported model (seed and mean rows alike), a footnote naming it, and
    in the claims table the compared models that were imported."""
    from gold_textgen.analysis.training_marks import IMPORTED
    from gold_textgen.claims.paper_claims import ClaimTest
    from gold_textgen.comparisons.claims_report import with_imported

    pd.DataFrame({"objective": ["gold_s"], "seed": [1], "still_improving": [False]}).to_csv(tmp_path / "demo.csv", index=False)
    marks = training_marks({"demo": tmp_path / "demo.csv"}, {"demo": ["mle"], "other": []})
    assert marks.imported == {"demo": ["mle"]} and marks.columns == [IMPORTED]
    table = pd.DataFrame({"task": ["demo"] * 3, "objective": ["mle", "mle", "gold_s"], "seed": ["1", "mean", "1"]})
    assert with_training_marks(table, marks)[IMPORTED].tolist() == ["yes", "yes", ""]
    assert "Imported (column `imported`)" in note(marks) and "demo: mle" in note(marks)
    assert IMPORTED not in with_training_marks(table, training_marks({"demo": tmp_path / "demo.csv"})).columns

    tests = [
        ClaimTest("quality_gold_s", "demo", "gold_s", "mle", "greedy", "test"),
        ClaimTest("quality_gold_s", "demo", "gold_s", "mle_continued", "greedy", "test"),
    ]
    claims = pd.DataFrame({"name": [test.name for test in tests]})
    assert with_imported(claims, tests, {"demo": ["mle"]})["imported"].tolist() == ["mle", ""]
