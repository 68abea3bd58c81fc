"""The demo's claims, checked on hand-made result files (one holds, one fails each)."""

import json

import pandas as pd
import yaml

from gold_textgen.analysis.demo_signatures import mle_convergence, signatures


def write_tables(root, gold_s_bleu, gold_p_perplexity, mle_drop):
    tables = root / "tables"
    tables.mkdir(parents=True)
    rows = []
    for objective, bleu, perplexity in (("mle", 40.0, 2.0), ("gold_s", gold_s_bleu, 3.0), ("gold_p", 41.0, gold_p_perplexity)):
        for seed in ("1", "mean"):
            rows.append({"task": "demo", "objective": objective, "decoder": "greedy", "seed": seed, "bleu": bleu, "perplexity": perplexity})
    pd.DataFrame(rows).to_csv(tables / "table1_main.csv", index=False)
    drops = [{"task": "demo", "decoder": "topk20", "objective": o, "drop_from_greedy": d} for o, d in (("mle", mle_drop), ("gold_s", 4.0))]
    pd.DataFrame(drops).to_csv(tables / "table2_decoding.csv", index=False)


def test_signatures_hold_and_fail_on_known_numbers(tmp_path):
    write_tables(tmp_path / "good", gold_s_bleu=41.0, gold_p_perplexity=2.5, mle_drop=12.0)
    assert all(passed for _, passed, _ in signatures(tmp_path / "good", "demo"))
    write_tables(tmp_path / "bad", gold_s_bleu=39.0, gold_p_perplexity=1.5, mle_drop=11.9)
    assert [passed for _, passed, _ in signatures(tmp_path / "bad", "demo")] == [False, False, False]


def test_mle_convergence_reads_each_runs_history(tmp_path):
    for seed, step, dev in ((1, 1600, [45.5, 46.2, 46.1]), (2, 4000, [40.0, 44.0])):
        model = tmp_path / "models" / "demo" / "mle" / f"seed{seed}"
        model.mkdir(parents=True)
        (model / "provenance.json").write_text(json.dumps({"metric": "bleu", "global_step": step}))
        (model / "resolved_config.yaml").write_text(yaml.safe_dump({"training": {"max_steps": 4000}}))
        (model / "log_history.json").write_text(json.dumps([{"step": 200 * (i + 1), "eval_bleu": v} for i, v in enumerate(dev)]))
    assert [passed for _, passed, _ in mle_convergence(tmp_path, "demo")] == [True, False]
