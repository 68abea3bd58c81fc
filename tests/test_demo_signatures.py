"""`gold-textgen signatures` on hand-made result files: the checks of every run (MLE converged, fine-tuning
kept a model its training made), the claims table the workflow wrote, and an exit status that fails on a
failed check, a contradicted claim or a covered claim with no verdict, never on an inconclusive one."""

import json

import numpy as np
import pandas as pd
import yaml
from conftest import REPO

from gold_textgen.bookkeeping.experiment_index import owned_settings, record_run
from gold_textgen.claims.paper_claims import experiment_claims
from gold_textgen.comparisons.claim_verdicts import Measured, decide
from gold_textgen.comparisons.demo_signatures import main, run_checks
from gold_textgen.comparisons.method_test import Noise
from gold_textgen.config.layers import merged_config
from gold_textgen.config.schema import validate_config
from gold_textgen.runtime.files import content_digest


def write_claims(root, contradicted, left_out=()):
    """tables/claims.csv of the demo's grid (config.yaml), as the claims rule writes it: every test a clear
    effect (supported) but those in `contradicted` (a clear reversal) and those in `left_out` (no row); and
    the experiment's record naming its config."""
    tests = [test for test in experiment_claims(validate_config(merged_config(REPO / "config.yaml"))) if test.name not in left_out]
    measured = []
    for test in tests:
        contrasts = np.array([1.0, 1.1, 0.9]) * (-1 if test.name in contradicted else 1)
        measured.append(Measured(test, (1, 2, 3), contrasts, Noise(float(contrasts.var(ddof=1)), 0.001, 3), None))
    rows = [vars(verdict) | {"claim": test.claim} for verdict, test in zip(decide(measured), tests, strict=True)]
    (root / "tables").mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(root / "tables" / "claims.csv", index=False)
    settings = owned_settings(merged_config(REPO / "config.yaml"))  # the record as the run's end writes it
    record_run(root, "demo", None, ["config.yaml"], [REPO / "config.yaml"], "code", complete=True, settings=settings)


def converged_run(root):
    finished_model(root, "mle", 1, 1500, [45.5, 46.2, 46.1], 4000)
    finished_model(root, "gold_s", 1, 200, [46.9, 46.7], 200, kept="last")


def test_supported_and_inconclusive_claims_pass_a_contradicted_or_missing_one_fails(tmp_path, capsys):
    converged_run(tmp_path)
    write_claims(tmp_path, contradicted=set())
    assert main(["--results", str(tmp_path)]) == 0
    said = capsys.readouterr().out
    assert "supported    quality_gold_s: gold_s vs mle:" in said and "of the 12 registered claims this grid covers: 12 supported" in said
    write_claims(tmp_path, contradicted={"perplexity_gold_s: gold_s vs mle"})
    assert main(["--results", str(tmp_path)]) == 1
    assert "perplexity_gold_s: gold_s vs mle (contradicted)" in capsys.readouterr().out


def test_a_registered_claim_the_grid_covers_missing_from_the_verdicts_fails_the_run(tmp_path, capsys):
    converged_run(tmp_path)
    write_claims(tmp_path, contradicted=set(), left_out={"quality_gold_s: gold_s vs mle_continued"})
    assert main(["--results", str(tmp_path)]) == 1
    assert "quality_gold_s: gold_s vs mle_continued (no verdict in the table)" in capsys.readouterr().out


def test_a_claims_table_the_run_did_not_write_is_refused_and_every_claim_tested_without_the_config(tmp_path, capsys):
    """Another experiment's table copied in, or a verdict edited by hand ("supported" beside bounds that say
    nothing): refused, naming the table. With the config file the record names gone, the record's own
    settings say which claims the grid covers: a missing row still fails the run."""
    converged_run(tmp_path)
    other = tmp_path / "other"
    write_claims(other, contradicted={"perplexity_gold_s: gold_s vs mle"})
    write_claims(tmp_path, contradicted=set())
    table = tmp_path / "tables" / "claims.csv"
    table.write_bytes((other / "tables" / "claims.csv").read_bytes())
    assert main(["--results", str(tmp_path)]) == 1
    assert "is not the claims table the run of" in capsys.readouterr().out
    write_claims(tmp_path, contradicted=set())
    edited = pd.read_csv(table)
    edited.loc[0, ["verdict", "estimate", "low", "high"]] = ["supported", float("nan"), float("-inf"), float("inf")]
    edited.to_csv(table, index=False)
    record = json.loads((tmp_path / "experiment.json").read_text())
    (tmp_path / "experiment.json").write_text(json.dumps({**record, "claims_digest": content_digest(table)}))  # the digest too
    assert main(["--results", str(tmp_path)]) == 1
    assert "not numbers; no test writes that" in capsys.readouterr().out
    write_claims(tmp_path, contradicted=set(), left_out={"quality_gold_s: gold_s vs mle_continued"})
    record = json.loads((tmp_path / "experiment.json").read_text())
    (tmp_path / "experiment.json").write_text(json.dumps({**record, "config_files": [str(tmp_path / "gone.yaml")]}))
    assert main(["--results", str(tmp_path)]) == 1
    assert "quality_gold_s: gold_s vs mle_continued (no verdict in the table)" in capsys.readouterr().out


def finished_model(root, objective, seed, step, dev, cap, kept="best"):
    model = root / "models" / "demo" / objective / f"seed{seed}"
    model.mkdir(parents=True)
    steps = [step // len(dev) * (i + 1) for i in range(len(dev))]
    best = steps[dev.index(max(dev))]
    provenance = {"metric": "bleu", "global_step": step, "best_checkpoint": f"checkpoint-{best}", "kept": kept}
    (model / "provenance.json").write_text(json.dumps(provenance))
    (model / "resolved_config.yaml").write_text(yaml.safe_dump({"training": {"max_steps": cap, "early_stopping_threshold": 0.3}}))
    (model / "log_history.json").write_text(json.dumps([{"step": s, "eval_bleu": v} for s, v in zip(steps, dev, strict=True)]))


def test_every_mle_run_must_converge_and_every_fine_tuning_run_keep_a_trained_model(tmp_path, capsys):
    finished_model(tmp_path, "mle", 1, 1500, [45.5, 46.2, 46.1], 4000)
    finished_model(tmp_path, "mle", 2, 4000, [44.0, 45.0, 46.0], 4000)  # its cap stopped it while it still rose
    finished_model(tmp_path, "gold_s", 1, 150, [46.9, 46.7, 46.8], 1500)  # early stopping kept the first
    finished_model(tmp_path, "gold_s", 2, 200, [46.9, 46.7], 200, kept="last")  # a fixed budget, its last kept
    assert [(name, passed) for name, passed, _ in run_checks(tmp_path, "demo")] == [
        ("gold_s seed1 kept a model its training made", False),
        ("gold_s seed2 kept a model its training made", True),
        ("mle seed1 converged before its cap", True),
        ("mle seed2 converged before its cap", False),
    ]
    write_claims(tmp_path, contradicted=set())
    assert main(["--results", str(tmp_path)]) == 1
    said = capsys.readouterr().out
    assert "Not shown by this run: gold_s seed1 kept a model its training made; mle seed2 converged before its cap" in said
