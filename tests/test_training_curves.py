"""Training curves from the models' logs, and the warning for runs their step cap stopped while improving."""

import json

import yaml

from gold_textgen.analysis.training_curves import still_improving_warnings, training_curves, write_training_curves


def fake_model(root, name, dev, global_step, max_steps, best_step, with_gold=False):
    model = root / name
    model.mkdir(parents=True)
    gold_stats = {"mean_weight": 0.5, "mean_return": 2.0} if with_gold else {}
    history = [{"step": 10 * (i + 1), "loss": 3.0 - i, **gold_stats} for i in range(len(dev))]
    history += [{"step": 10 * (i + 1), "eval_bleu": value} for i, value in enumerate(dev)]
    (model / "log_history.json").write_text(json.dumps(history))
    provenance = {"metric": "bleu", "global_step": global_step, "best_checkpoint": f"checkpoint-{best_step}"}
    (model / "provenance.json").write_text(json.dumps(provenance))
    (model / "resolved_config.yaml").write_text(yaml.safe_dump({"training": {"max_steps": max_steps}}))
    return model


def test_the_warning_fires_only_for_a_run_its_cap_stopped_while_improving(tmp_path):
    models = {
        ("mle", 1): fake_model(tmp_path, "capped", [10.0, 20.0, 30.0], 30, 30, 30),  # best = last, at the cap
        ("mle", 2): fake_model(tmp_path, "stopped", [10.0, 20.0, 21.0], 30, 100, 30),  # early stopping ended it
        ("gold_s", 1): fake_model(tmp_path, "settled", [10.0, 20.0, 19.0], 30, 30, 20, with_gold=True),  # best before the cap
    }
    curves, summary = training_curves(models)
    assert summary["still_improving"].tolist() == [True, False, False]
    warnings = still_improving_warnings("demo", summary)
    assert len(warnings) == 1 and "mle seed 1: still improving at its step cap" in warnings[0]
    assert set(curves[curves["objective"] == "gold_s"]["curve"]) == {"dev_metric", "train_loss", "mean_weight", "mean_return"}
    assert summary["selected_step"].tolist() == [30, 30, 20]


def test_the_figure_and_tables_are_written(tmp_path):
    mle = fake_model(tmp_path, "m", [10.0, 20.0, 19.0], 30, 100, 20)
    gold = fake_model(tmp_path, "g", [20.0, 21.0, 22.0], 30, 30, 30, with_gold=True)
    paths = [tmp_path / name for name in ("curves.png", "curves.csv", "summary.csv")]
    warnings = write_training_curves("demo", {"mle/1": mle, "gold_s/1": gold}, *paths)
    assert paths[0].read_bytes().startswith(b"\x89PNG") and len(warnings) == 1
