"""The demo's claims, checked on hand-made result files: each against MLE and the control, per seed and
with the seed interval, and every run's convergence."""

import json

import pandas as pd
import yaml

from gold_textgen.analysis.demo_signatures import bleu_information, run_convergence, signatures

METRICS = dict(chrf=0.0, rouge1=0.0, rouge2=0.0, rougeL=0.0, rougeLsum=0.0, unk_rate=0.0, token_accuracy=0.0)


def write_score(root, objective, seed, split, decoder, bleu, perplexity=2.0, sample=0):
    path = root / "scores" / "demo" / objective / f"seed{seed}" / split / decoder / f"sample{sample}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    row = dict(task="demo", objective=objective, seed=seed, split=split, decoder=decoder, sample=sample, bleu=bleu, perplexity=perplexity)
    path.write_text(json.dumps({**row, **METRICS}))


def write_run(root, gold_perplexity, control_drop):
    """Two seeds: MLE and the control at perplexity ~2.1, GOLD above; the drops of top-k 20 from greedy
    (dev): MLE 19-20, GOLD-s 4-5, the control `control_drop` per seed."""
    for seed in (1, 2):
        for objective, perplexity in (("mle", 2.1), ("mle_continued", 2.05 + 0.01 * seed), ("gold_s", gold_perplexity[seed - 1])):
            write_score(root, objective, seed, "test", "greedy", 46.0, perplexity)
        drops = {"mle": 19.0 + seed, "mle_continued": control_drop[seed - 1], "gold_s": 4.0 + 0.5 * seed}
        for objective, drop in drops.items():
            write_score(root, objective, seed, "valid", "greedy", 46.0)
            for sample in (1, 2):  # two sampling runs that average to greedy - drop
                write_score(root, objective, seed, "valid", "topk20", 46.0 - drop + (-1) ** sample, sample=sample)


def test_claims_hold_per_seed_and_against_mle_and_the_control(tmp_path):
    write_run(tmp_path, gold_perplexity=(2.7, 2.8), control_drop=(18.0, 19.5))
    checks = signatures(tmp_path, "demo")
    assert [name for name, _, _ in checks] == [
        "gold_s test perplexity above MLE's",
        "gold_s test perplexity above the control's",
        "MLE's greedy -> top-k 20 drop >= 3x GOLD-s's",
        "the control's greedy -> top-k 20 drop >= 3x GOLD-s's",
    ]
    assert all(passed for _, passed, _ in checks), checks


def test_a_claim_fails_on_one_seed_or_against_the_control(tmp_path):
    # seed 2's GOLD-s perplexity below MLE's; the control's drop only 2x GOLD-s's on seed 1
    write_run(tmp_path, gold_perplexity=(2.7, 2.0), control_drop=(9.0, 19.5))
    passed = {name: holds for name, holds, _ in signatures(tmp_path, "demo")}
    assert passed == {
        "gold_s test perplexity above MLE's": False,
        "gold_s test perplexity above the control's": False,
        "MLE's greedy -> top-k 20 drop >= 3x GOLD-s's": True,
        "the control's greedy -> top-k 20 drop >= 3x GOLD-s's": False,
    }


def test_every_run_must_end_before_its_cap_stops_it_improving(tmp_path):
    runs = {("mle", 1): (1600, [45.5, 46.2, 46.1], 4000), ("gold_s", 2): (300, [46.0, 46.2, 46.4], 300)}
    for (objective, seed), (step, dev, cap) in runs.items():
        model = tmp_path / "models" / "demo" / objective / f"seed{seed}"
        model.mkdir(parents=True)
        steps = [step // len(dev) * (i + 1) for i in range(len(dev))]
        best = steps[dev.index(max(dev))]
        provenance = {"metric": "bleu", "global_step": step, "best_checkpoint": f"checkpoint-{best}"}
        (model / "provenance.json").write_text(json.dumps(provenance))
        (model / "resolved_config.yaml").write_text(yaml.safe_dump({"training": {"max_steps": cap}}))
        (model / "log_history.json").write_text(json.dumps([{"step": s, "eval_bleu": v} for s, v in zip(steps, dev, strict=True)]))
    assert [(name.split(" ended")[0], passed) for name, passed, _ in run_convergence(tmp_path, "demo")] == [
        ("gold_s seed2", False),
        ("mle seed1", True),
    ]


def test_the_bleu_comparison_is_reported_as_the_significance_table_has_it(tmp_path):
    (tmp_path / "tables").mkdir()
    rows = [("mle", "no: too few seeds (x)", 0.13, 0.4), ("mle_continued", "yes", -0.35, 0.01)]
    columns = {"task": "demo", "objective": "gold_s", "metric": "bleu", "mde": 0.5}
    frame = pd.DataFrame([{**columns, "baseline": b, "delta": d, "reading": y, "p_holm": p} for b, y, d, p in rows])
    ter = {**columns, "metric": "ter", "baseline": "mle", "delta": 1.0, "reading": "yes", "p_holm": 0.0}  # not the task metric
    pd.concat([frame, pd.DataFrame([ter])]).to_csv(tmp_path / "tables" / "significance.csv", index=False)
    assert bleu_information(tmp_path, "demo") == [
        "GOLD-s vs MLE greedy test bleu: +0.13, p (Holm) 0.400, minimum detectable difference 0.50; "
        "significant at 95%: no: too few seeds (x)",
        "GOLD-s vs the control greedy test bleu: -0.35, p (Holm) 0.010, minimum detectable difference 0.50; significant at 95%: yes",
    ]
