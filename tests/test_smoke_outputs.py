"""The smoke experiment's outputs (the session's `tiny_run`), read as their readers read them: every file
there and non-empty, each table built from the scores, models recording how they were made."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
import yaml
from conftest import REPO, run_snakemake

from gold_textgen.claims.paper_claims import experiment_claims
from gold_textgen.config.layers import merged_config
from gold_textgen.config.schema import validate_config

pytestmark = pytest.mark.workflow

EXPECTED_FILES = [
    "results/smoke/data/demo/train.jsonl",
    "results/smoke/data/demo/valid.jsonl",
    "results/smoke/data/demo/test.jsonl",
    "results/smoke/tokenizers/demo/tokenizer.json",
    "results/smoke/models/demo/mle/seed1/model.safetensors",
    "results/smoke/models/demo/mle/seed1/config.json",
    "results/smoke/models/demo/mle/seed1/tokenizer.json",
    "results/smoke/models/demo/mle/seed1/resolved_config.yaml",
    "results/smoke/models/demo/mle/seed1/provenance.json",
    "results/smoke/rewards/demo/seed1/train.parquet",
    "results/smoke/models/demo/gold_delta/seed1/model.safetensors",
    "results/smoke/models/demo/gold_p/seed1/model.safetensors",
    "results/smoke/models/demo/gold_s/seed1/model.safetensors",
    "results/smoke/models/demo/gold_s/seed1/provenance.json",
    "results/smoke/scores/demo/gold_s/seed1/test/greedy/sample0.json",
    "results/smoke/tables/table1_main.csv",
    "results/smoke/tables/table1_main.md",
    "logs/smoke/fine_tune/demo/gold_s/seed1.log",
    "logs/smoke/benchmarks/fine_tune/demo/gold_s/seed1.tsv",
    "results/smoke/generations/demo/mle/seed1/test/greedy/sample0.jsonl",
    "results/smoke/token_nll/demo/mle/seed1/test.parquet",
    "results/smoke/scores/demo/mle/seed1/test/greedy/sample0.json",
    "results/smoke/tables/main.csv",
    "results/smoke/tables/main.md",
    "results/smoke/tables/objectives.csv",
    "results/smoke/tables/objectives.md",
    "results/smoke/figures/objectives.png",
    "logs/smoke/train_mle/demo/seed1.log",
    "logs/smoke/evaluate/demo/mle/seed1/test.log",
    "logs/smoke/benchmarks/train_mle/demo/seed1.tsv",
    "logs/smoke/benchmarks/evaluate/demo/mle/seed1/test.tsv",
    "results/smoke/generations/demo/gold_s/seed1/valid/topk5/sample2.jsonl",
    "results/smoke/scores/demo/mle/seed1/valid/beam3/sample0.json",
    "results/smoke/tables/table2_decoding.csv",
    "results/smoke/tables/table2_decoding.md",
    "results/smoke/tables/claims.csv",
    "results/smoke/tables/claims.md",
    "results/smoke/figures/demo/nll_histogram.png",
    "results/smoke/figures/demo/nll_by_time_step.png",
    "results/smoke/figures/demo/exposure_bias.png",
    "results/smoke/analysis/demo/nll_summary.csv",
    "results/smoke/analysis/demo/nll_by_time_step.csv",
    "results/smoke/analysis/demo/exposure_bias.csv",
    "results/smoke/tables/demo/diversity.csv",
    "results/smoke/tables/demo/examples.csv",
    "results/smoke/tables/demo/examples.md",
    "results/smoke/human_eval/demo/sheet.csv",
    "results/smoke/human_eval/demo/key.csv",
    "results/smoke/figures/demo/training_curves.png",
    "results/smoke/analysis/demo/training_curves.csv",
    "results/smoke/analysis/demo/training_summary.csv",
]


def test_every_output_exists_and_is_not_empty(tiny_run):
    missing = [relative for relative in EXPECTED_FILES if not (tiny_run / relative).is_file()]
    empty = [relative for relative in EXPECTED_FILES if relative not in missing and (tiny_run / relative).stat().st_size == 0]
    assert (missing, empty) == ([], [])


def test_outputs_hold_what_their_readers_expect(tiny_run):
    for figure in (tiny_run / "results/smoke/figures/demo").glob("*.png"):
        assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", figure
    timing = (tiny_run / "logs/smoke/benchmarks/train_mle/demo/seed1.tsv").read_text().splitlines()
    assert timing[0].split("\t")[:2] == ["s", "h:m:s"] and float(timing[1].split("\t")[0]) > 0
    provenance = json.loads((tiny_run / "results/smoke/models/demo/gold_s/seed1/provenance.json").read_text())
    assert provenance["objective"] == "gold_s" and provenance["global_step"] > 0
    resolved = yaml.safe_load((tiny_run / "results/smoke/models/demo/gold_s/seed1/resolved_config.yaml").read_text())
    assert resolved["training"]["objective"]["reward"] == "s"
    assert "Traceback" not in (tiny_run / "logs/smoke/fine_tune/demo/gold_s/seed1.log").read_text()
    sheet, key = (pd.read_csv(tiny_run / f"results/smoke/human_eval/demo/{name}.csv") for name in ("sheet", "key"))
    assert len(sheet) == len(key) == 10  # smoke.yaml's human_eval_items
    assert len(pd.read_csv(tiny_run / "results/smoke/tables/demo/examples.csv")) == 3  # its num_examples


def test_data_files_follow_the_contract(tiny_run):
    sizes = {"train": 400, "valid": 40, "test": 40}
    for split, size in sizes.items():
        rows = [json.loads(line) for line in (tiny_run / f"results/smoke/data/demo/{split}.jsonl").read_text().splitlines()]
        assert len(rows) == size
        assert all(row["source"] and row["target"] and row["id"].startswith(f"demo-{split}-") for row in rows)
    train = [json.loads(line) for line in (tiny_run / "results/smoke/data/demo/train.jsonl").read_text().splitlines()]
    assert sum(row["sloppy"] for row in train) == round(0.35 * 400)


def test_model_directory_records_config_and_revision(tiny_run):
    model_dir = tiny_run / "results/smoke/models/demo/mle/seed1"
    resolved = yaml.safe_load((model_dir / "resolved_config.yaml").read_text())
    assert resolved["seed"] == 1 and resolved["task"]["model"]["d_model"] == 32
    provenance = json.loads((model_dir / "provenance.json").read_text())
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?|unknown", provenance["git_revision"])
    assert provenance["metric"] == "bleu" and provenance["best_checkpoint"].startswith("checkpoint-")
    assert provenance["versions"]["transformers"].startswith("5.")
    assert not list(model_dir.glob("*.bin")), "weights must be safetensors"


def test_generations_align_with_the_test_split(tiny_run):
    generations = [
        json.loads(line)
        for line in (tiny_run / "results/smoke/generations/demo/mle/seed1/test/greedy/sample0.jsonl").read_text().splitlines()
    ]
    test = [json.loads(line) for line in (tiny_run / "results/smoke/data/demo/test.jsonl").read_text().splitlines()]
    assert [g["id"] for g in generations] == [t["id"] for t in test]
    assert [g["reference"] for g in generations] == [t["target"] for t in test]
    assert all(isinstance(g["hypothesis"], str) for g in generations)


def test_token_nll_covers_every_reference_token(tiny_run):
    table = pd.read_parquet(tiny_run / "results/smoke/token_nll/demo/mle/seed1/test.parquet")
    assert list(table.columns) == ["example", "position", "token_id", "nll", "correct"]
    assert table["example"].nunique() == 40
    assert (table["nll"] >= 0).all()
    first = table[table["example"] == 0]
    assert list(first["position"]) == list(range(len(first)))
    assert first["token_id"].iloc[-1] == 2  # every reference ends with EOS


def test_scores_are_consistent(tiny_run):
    scores = json.loads((tiny_run / "results/smoke/scores/demo/mle/seed1/test/greedy/sample0.json").read_text())
    assert 0.0 <= scores["bleu"] <= 100.0 and scores["bleu_signature"].startswith("nrefs:1")
    table = pd.read_parquet(tiny_run / "results/smoke/token_nll/demo/mle/seed1/test.parquet")
    assert scores["perplexity"] == pytest.approx(float(__import__("numpy").exp(table["nll"].astype(float).mean())), rel=1e-6)
    assert scores["num_examples"] == 40 and scores["seed"] == 1
    assert scores["unk_rate"] == pytest.approx(100.0 * float(table["token_id"].eq(3).mean()))  # <unk> is id 3


def test_main_table_is_built_from_the_scores(tiny_run):
    table = pd.read_csv(tiny_run / "results/smoke/tables/main.csv", dtype={"seed": str})
    for objective in ("mle", "gold_delta", "gold_p", "gold_s"):
        scores = json.loads((tiny_run / f"results/smoke/scores/demo/{objective}/seed1/test/greedy/sample0.json").read_text())
        rows = table[table["objective"] == objective]
        assert list(rows["seed"]) == ["1", "mean"]
        assert rows.iloc[0]["bleu"] == pytest.approx(scores["bleu"], abs=1e-4)
    assert "| demo | transformer | mle | baseline | test | greedy | mean |" in (tiny_run / "results/smoke/tables/main.md").read_text()


def test_table1_lists_mle_then_the_gold_objectives(tiny_run):
    table = pd.read_csv(tiny_run / "results/smoke/tables/table1_main.csv", dtype={"seed": str}, keep_default_na=False)
    assert list(dict.fromkeys(table["objective"])) == ["mle", "gold_delta", "gold_p", "gold_s", "mle_continued"]
    assert {"bleu", "perplexity", "unk_rate"} <= set(table.columns) and "rouge2" not in table.columns
    assert table.loc[table["objective"] == "mle_continued", "role"].eq("control").all()
    text = (tiny_run / "results/smoke/tables/table1_main.md").read_text()
    assert "| demo | transformer | gold_s |  | mean |" in text and "| demo | transformer | mle_continued | control | mean |" in text
    # The smoke MLE may end still improving (allow_unconverged_mle): each row says so as its training summary does.
    summary = pd.read_csv(tiny_run / "results/smoke/analysis/demo/training_summary.csv")
    mle_unconverged = not bool(summary.loc[summary["objective"] == "mle", "converged"].iloc[0])
    seed_rows = table[table["seed"] == "1"]
    assert seed_rows["mle_unconverged"].eq("yes" if mle_unconverged else "").all()
    assert ("Unconverged MLE" in text) == mle_unconverged


def test_table2_is_built_from_the_sweep_scores(tiny_run):
    table = pd.read_csv(tiny_run / "results/smoke/tables/table2_decoding.csv")
    assert list(dict.fromkeys(table["decoder"])) == ["greedy", "beam3", "topk5"]
    row = table[(table["decoder"] == "topk5") & (table["objective"] == "gold_p")].iloc[0]
    runs = [
        json.loads((tiny_run / f"results/smoke/scores/demo/gold_p/seed1/valid/topk5/sample{n}.json").read_text())["bleu"] for n in (1, 2)
    ]
    assert row["mean"] == pytest.approx(sum(runs) / 2, abs=1e-4) and row["n_samples"] == 2
    greedy = json.loads((tiny_run / "results/smoke/scores/demo/gold_p/seed1/valid/greedy/sample0.json").read_text())["bleu"]
    assert row["drop_from_greedy"] == pytest.approx(greedy - sum(runs) / 2, abs=1e-3)


def test_gold_model_records_its_objective_settings(tiny_run):
    resolved = yaml.safe_load((tiny_run / "results/smoke/models/demo/gold_p/seed1/resolved_config.yaml").read_text())
    assert resolved["objective"] == "gold_p"
    assert resolved["training"]["objective"] == {
        "loss": "gold",
        "lag": True,
        "start_from": "mle",
        "reward": "p",
        "min_weight": 0.1,
        "floor": 1.0,
        "baseline": -60,
        "sync_every": 7,
        "sync_each_epoch": False,
        "horizon": 5,
        "gamma": 1.0,
        "label_smoothing": 0.1,
        "rewards": "cached",
    }
    history = json.loads((tiny_run / "results/smoke/models/demo/gold_p/seed1/log_history.json").read_text())
    assert any("mean_return" in entry for entry in history)


def test_analyses_read_the_analysis_models(tiny_run):
    summary = pd.read_csv(tiny_run / "results/smoke/analysis/demo/nll_summary.csv")
    assert summary["objective"].tolist() == ["mle", "mle_continued", "gold_delta", "gold_p", "gold_s"]
    nll = pd.read_parquet(tiny_run / "results/smoke/token_nll/demo/gold_s/seed1/test.parquet")
    assert summary.iloc[4]["tokens"] == len(nll)
    diversity = pd.read_csv(tiny_run / "results/smoke/tables/demo/diversity.csv")
    assert diversity["system"].tolist()[0] == "reference" and len(diversity) == 6
    key = pd.read_csv(tiny_run / "results/smoke/human_eval/demo/key.csv")
    assert len(key) == 10 and set(key["system_a"]) | set(key["system_b"]) == {"MLE", "GOLD-s"}


def test_training_curves_mark_each_runs_selected_checkpoint(tiny_run):
    summary = pd.read_csv(tiny_run / "results/smoke/analysis/demo/training_summary.csv")
    assert len(summary) == 5  # MLE, the control and the three GOLD objectives, seed 1
    for row in summary.itertuples():
        provenance = json.loads((tiny_run / f"results/smoke/models/demo/{row.objective}/seed{row.seed}/provenance.json").read_text())
        # the kept model: the best dev checkpoint (MLE), or the last after the fixed budget (fine-tuning, keep: last)
        kept = f"checkpoint-{provenance['global_step']}" if provenance["kept"] == "last" else provenance["best_checkpoint"]
        assert f"checkpoint-{row.selected_step}" == kept and provenance["kept"] == ("best" if row.objective == "mle" else "last")
    curves = pd.read_csv(tiny_run / "results/smoke/analysis/demo/training_curves.csv")
    gold = curves[curves["objective"] == "gold_s"]
    assert {"dev_metric", "train_loss", "mean_weight", "mean_return"} <= set(gold["curve"])


def test_the_steps_after_the_servers_start_ran_warm(tiny_run):
    """Warm starts in a real run (gold_textgen.runtime.warm_start): by the evaluations, tables and figures the
    server is up, and their logs name a fork of it."""
    logs, starts = tiny_run / "logs" / "smoke", {}
    for log in logs.rglob("*.log"):  # benchmark files end in .tsv
        starts[log.relative_to(logs).as_posix()] = re.findall(r"job environment: .*?\bstart=(\w+)", log.read_text())
    late = {name: found for name, found in starts.items() if name.startswith(("evaluate/", "table1/", "table2/", "nll_histogram/"))}
    assert late and all(found == ["warm"] for found in late.values()), late


def test_rerun_with_nothing_changed_runs_nothing(tiny_run):
    result = run_snakemake(tiny_run, "-n", "--configfile", str(REPO / "configs" / "smoke.yaml"))
    assert "Nothing to be done" in result.stdout + result.stderr


def test_the_claims_table_holds_every_registered_claim_the_grid_covers(tiny_run):
    """From the grid alone (configs/smoke.yaml: every GOLD variant, the control, greedy and top-k 5 in the
    sweep), whatever the run gave; one seed: each inconclusive, saying why."""
    config = validate_config(merged_config(REPO / "config.yaml", [REPO / "configs" / "smoke.yaml"]))
    table = pd.read_csv(tiny_run / "results/smoke/tables/claims.csv")
    assert list(table["name"]) == [test.name for test in experiment_claims(config)]
    assert {"quality_gold_p: gold_p vs mle", "sampling_drop_topk5: gold_s vs mle_continued (topk5)"} <= set(table["name"])
    assert set(table["verdict"]) == {"inconclusive"} and table["reading"].str.startswith("one seed").all()
