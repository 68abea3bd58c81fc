"""The workflow itself: the DAG, config errors at parse time, and a real tiny run end to end."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO, SNAKEMAKE, run_snakemake
from report_browser import CHROMEDRIVER, CHROMIUM, browse_report

pytestmark = pytest.mark.workflow
# The default experiment: one task, MLE, the control and three GOLD objectives, two seeds (10 models); each model has one
# evaluation job per split: greedy decoding of the test split, and the Table 2 sweep of the dev split
# (greedy, beam 3, beam 5, and 3 runs each of top-k 5 and top-k 20), each with its token NLL and scores.
EXPECTED_JOBS = {
    "prepare_dataset": 1,
    "train_tokenizer": 1,
    "train_mle": 3,
    "cache_rewards": 3,
    "fine_tune": 6,
    "evaluate_test": 9,
    "evaluate_valid": 9,
    "main_table": 1,
    "table1": 1,
    "table2": 1,
    "objectives_table": 1,
    "significance": 1,  # each objective against MLE, for Table 1, the main table and the objectives table
    "nll_histogram": 1,
    "nll_by_time_step": 1,
    "exposure_bias": 1,
    "diversity": 1,
    "examples": 1,
    "human_eval_sheet": 1,
    "training_curves": 1,
    "all": 1,
}
TRAINING_RULES = {"prepare_dataset", "train_tokenizer", "train_mle", "cache_rewards", "fine_tune"}


def job_counts(dry_run_output: str) -> dict[str, int]:
    """Parse Snakemake's 'Job stats' table of a dry run."""
    table = dry_run_output.split("Job stats:")[1].split("total")[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", table, flags=re.M)}


def test_dry_run_shows_the_whole_dag(tmp_path):
    result = run_snakemake(tmp_path, "-n", "--quiet", "rules")
    assert job_counts(result.stdout) == EXPECTED_JOBS


def test_dry_run_scales_with_seeds(tmp_path, smoke_config):
    config = yaml.safe_load(smoke_config.read_text())
    config["experiment"].update(tasks=["demo"], seeds=[1, 2, 3])
    smoke_config.write_text(yaml.safe_dump(config))
    counts = job_counts(run_snakemake(tmp_path, "-n", "--quiet", "rules", "--configfile", str(smoke_config)).stdout)
    assert counts["train_mle"] == counts["cache_rewards"] == 3
    # 15 models, each decoded on test (greedy) and in the sweep: greedy, beam3, beam5, topk5 x 2 (smoke), topk20 x 3
    assert counts["fine_tune"] == 12 and counts["evaluate_test"] == counts["evaluate_valid"] == 15
    assert counts["prepare_dataset"] == counts["train_tokenizer"] == counts["main_table"] == 1


def test_one_objective_and_seed_is_a_partial_target(tmp_path):
    counts = job_counts(run_snakemake(tmp_path, "results/models/demo/gold_s/seed2", "-n", "--quiet", "rules").stdout)
    assert counts == {"prepare_dataset": 1, "train_tokenizer": 1, "train_mle": 1, "cache_rewards": 1, "fine_tune": 1}


def test_bad_config_stops_before_any_job_and_names_the_key(tmp_path, smoke_config):
    config = yaml.safe_load(smoke_config.read_text())
    config["tasks"]["demo"]["mle"]["learning_rate"] = -0.1
    smoke_config.write_text(yaml.safe_dump(config))
    result = run_snakemake(tmp_path, "-n", "--configfile", str(smoke_config), check=False)
    assert result.returncode != 0
    assert "tasks.demo.mle.learning_rate: -0.1 is less than or equal to the minimum of 0" in result.stderr + result.stdout
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("results/models/demo/gold_zz/seed1", "objective 'gold_zz' is not defined for task demo (defined: mle, gold_delta"),
        ("results/generations/demo/mle/seed1/test/beam9/sample0.jsonl", "decoder 'beam9' is not defined under decoders"),
        ("results/models/demo/mle/seed99", "seed 99 is not one of experiment.seeds [1, 2, 3]"),
        ("results/scores/demo/mle/seed1/valid/topk5/sample9.json", "decoder 'topk5' runs sample1..sample3; sample9 is not one of them"),
        ("results/scores/demo/mle/seed1/test/beam3/sample0.json", "decoder 'beam3' is not run on the test split"),
    ],
)
def test_a_target_outside_the_config_is_refused_with_what_exists(tmp_path, target, message):
    result = run_snakemake(tmp_path, "-n", target, check=False)
    assert result.returncode != 0 and message in result.stdout + result.stderr


def test_a_config_error_names_the_file_that_holds_the_bad_key(tmp_path):
    overlay = tmp_path / "mine.yaml"
    overlay.write_text("tasks:\n  demo:\n    mle:\n      learning_rate: .nan\n")
    result = run_snakemake(tmp_path, "-n", "--configfile", str(overlay), check=False)
    assert f"invalid configuration (set in {overlay}): config key tasks.demo.mle.learning_rate: nan is not a finite number" in (
        result.stdout + result.stderr
    )


def test_the_slurm_profile_by_name_plans_from_the_project_root():
    """`snakemake --profile slurm`, typed as is in the project root (a dry run: nothing is submitted)."""
    result = subprocess.run(
        [str(SNAKEMAKE), "--profile", "slurm", "-n", "--quiet", "rules"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert job_counts(result.stdout)["train_mle"] >= 1


EXPECTED_FILES = [
    "results/data/demo/train.jsonl",
    "results/data/demo/valid.jsonl",
    "results/data/demo/test.jsonl",
    "results/tokenizers/demo/tokenizer.json",
    "results/models/demo/mle/seed1/model.safetensors",
    "results/models/demo/mle/seed1/config.json",
    "results/models/demo/mle/seed1/tokenizer.json",
    "results/models/demo/mle/seed1/resolved_config.yaml",
    "results/models/demo/mle/seed1/provenance.json",
    "results/rewards/demo/seed1/train.parquet",
    "results/models/demo/gold_delta/seed1/model.safetensors",
    "results/models/demo/gold_p/seed1/model.safetensors",
    "results/models/demo/gold_s/seed1/model.safetensors",
    "results/models/demo/gold_s/seed1/provenance.json",
    "results/scores/demo/gold_s/seed1/test/greedy/sample0.json",
    "results/tables/table1_main.csv",
    "results/tables/table1_main.md",
    "logs/fine_tune/demo/gold_s/seed1.log",
    "logs/benchmarks/fine_tune/demo/gold_s/seed1.tsv",
    "results/generations/demo/mle/seed1/test/greedy/sample0.jsonl",
    "results/token_nll/demo/mle/seed1/test.parquet",
    "results/scores/demo/mle/seed1/test/greedy/sample0.json",
    "results/tables/main.csv",
    "results/tables/main.md",
    "results/tables/objectives.csv",
    "results/tables/objectives.md",
    "results/figures/objectives.png",
    "logs/train_mle/demo/seed1.log",
    "logs/evaluate/demo/mle/seed1/test.log",
    "logs/benchmarks/train_mle/demo/seed1.tsv",
    "logs/benchmarks/evaluate/demo/mle/seed1/test.tsv",
    "results/generations/demo/gold_s/seed1/valid/topk5/sample2.jsonl",
    "results/scores/demo/mle/seed1/valid/beam3/sample0.json",
    "results/tables/table2_decoding.csv",
    "results/tables/table2_decoding.md",
    "results/figures/demo/nll_histogram.png",
    "results/figures/demo/nll_by_time_step.png",
    "results/figures/demo/exposure_bias.png",
    "results/analysis/demo/nll_summary.csv",
    "results/analysis/demo/nll_by_time_step.csv",
    "results/analysis/demo/exposure_bias.csv",
    "results/tables/demo/diversity.csv",
    "results/tables/demo/examples.csv",
    "results/tables/demo/examples.md",
    "results/human_eval/demo/sheet.csv",
    "results/human_eval/demo/key.csv",
    "results/figures/demo/training_curves.png",
    "results/analysis/demo/training_curves.csv",
    "results/analysis/demo/training_summary.csv",
]


def test_every_output_exists_and_is_not_empty(tiny_run):
    missing = [relative for relative in EXPECTED_FILES if not (tiny_run / relative).is_file()]
    empty = [relative for relative in EXPECTED_FILES if relative not in missing and (tiny_run / relative).stat().st_size == 0]
    assert (missing, empty) == ([], [])


def test_outputs_hold_what_their_readers_expect(tiny_run):
    for figure in (tiny_run / "results/figures/demo").glob("*.png"):
        assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", figure
    timing = (tiny_run / "logs/benchmarks/train_mle/demo/seed1.tsv").read_text().splitlines()
    assert timing[0].split("\t")[:2] == ["s", "h:m:s"] and float(timing[1].split("\t")[0]) > 0
    provenance = json.loads((tiny_run / "results/models/demo/gold_s/seed1/provenance.json").read_text())
    assert provenance["objective"] == "gold_s" and provenance["global_step"] > 0
    resolved = yaml.safe_load((tiny_run / "results/models/demo/gold_s/seed1/resolved_config.yaml").read_text())
    assert resolved["training"]["objective"]["reward"] == "s"
    assert "Traceback" not in (tiny_run / "logs/fine_tune/demo/gold_s/seed1.log").read_text()
    sheet, key = (pd.read_csv(tiny_run / f"results/human_eval/demo/{name}.csv") for name in ("sheet", "key"))
    assert len(sheet) == len(key) == 10  # smoke.yaml's human_eval_items
    assert len(pd.read_csv(tiny_run / "results/tables/demo/examples.csv")) == 3  # its num_examples


def test_data_files_follow_the_contract(tiny_run):
    sizes = {"train": 400, "valid": 40, "test": 40}
    for split, size in sizes.items():
        rows = [json.loads(line) for line in (tiny_run / f"results/data/demo/{split}.jsonl").read_text().splitlines()]
        assert len(rows) == size
        assert all(row["source"] and row["target"] and row["id"].startswith(f"demo-{split}-") for row in rows)
    train = [json.loads(line) for line in (tiny_run / "results/data/demo/train.jsonl").read_text().splitlines()]
    assert sum(row["sloppy"] for row in train) == round(0.35 * 400)


def test_model_directory_records_config_and_revision(tiny_run):
    model_dir = tiny_run / "results/models/demo/mle/seed1"
    resolved = yaml.safe_load((model_dir / "resolved_config.yaml").read_text())
    assert resolved["seed"] == 1 and resolved["task"]["model"]["d_model"] == 32
    provenance = json.loads((model_dir / "provenance.json").read_text())
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?|unknown", provenance["git_revision"])
    assert provenance["metric"] == "bleu" and provenance["best_checkpoint"].startswith("checkpoint-")
    assert provenance["versions"]["transformers"].startswith("5.")
    assert not list(model_dir.glob("*.bin")), "weights must be safetensors"


def test_generations_align_with_the_test_split(tiny_run):
    generations = [
        json.loads(line) for line in (tiny_run / "results/generations/demo/mle/seed1/test/greedy/sample0.jsonl").read_text().splitlines()
    ]
    test = [json.loads(line) for line in (tiny_run / "results/data/demo/test.jsonl").read_text().splitlines()]
    assert [g["id"] for g in generations] == [t["id"] for t in test]
    assert [g["reference"] for g in generations] == [t["target"] for t in test]
    assert all(isinstance(g["hypothesis"], str) for g in generations)


def test_token_nll_covers_every_reference_token(tiny_run):
    table = pd.read_parquet(tiny_run / "results/token_nll/demo/mle/seed1/test.parquet")
    assert list(table.columns) == ["example", "position", "token_id", "nll", "correct"]
    assert table["example"].nunique() == 40
    assert (table["nll"] >= 0).all()
    first = table[table["example"] == 0]
    assert list(first["position"]) == list(range(len(first)))
    assert first["token_id"].iloc[-1] == 2  # every reference ends with EOS


def test_scores_are_consistent(tiny_run):
    scores = json.loads((tiny_run / "results/scores/demo/mle/seed1/test/greedy/sample0.json").read_text())
    assert 0.0 <= scores["bleu"] <= 100.0 and scores["bleu_signature"].startswith("nrefs:1")
    table = pd.read_parquet(tiny_run / "results/token_nll/demo/mle/seed1/test.parquet")
    assert scores["perplexity"] == pytest.approx(float(__import__("numpy").exp(table["nll"].astype(float).mean())), rel=1e-6)
    assert scores["num_examples"] == 40 and scores["seed"] == 1
    assert scores["unk_rate"] == pytest.approx(100.0 * float(table["token_id"].eq(3).mean()))  # <unk> is id 3


def test_main_table_is_built_from_the_scores(tiny_run):
    table = pd.read_csv(tiny_run / "results/tables/main.csv", dtype={"seed": str})
    for objective in ("mle", "gold_delta", "gold_p", "gold_s"):
        scores = json.loads((tiny_run / f"results/scores/demo/{objective}/seed1/test/greedy/sample0.json").read_text())
        rows = table[table["objective"] == objective]
        assert list(rows["seed"]) == ["1", "mean"]
        assert rows.iloc[0]["bleu"] == pytest.approx(scores["bleu"], abs=1e-4)
    assert "| demo | transformer | mle | baseline | test | greedy | mean |" in (tiny_run / "results/tables/main.md").read_text()


def test_table1_lists_mle_then_the_gold_objectives(tiny_run):
    table = pd.read_csv(tiny_run / "results/tables/table1_main.csv", dtype={"seed": str}, keep_default_na=False)
    assert list(dict.fromkeys(table["objective"])) == ["mle", "gold_delta", "gold_p", "gold_s", "mle_continued"]
    assert {"bleu", "perplexity", "unk_rate"} <= set(table.columns) and "rouge2" not in table.columns
    assert table.loc[table["objective"] == "mle_continued", "role"].eq("control").all()
    text = (tiny_run / "results/tables/table1_main.md").read_text()
    assert "| demo | transformer | gold_s |  | mean |" in text and "| demo | transformer | mle_continued | control | mean |" in text
    # The smoke MLE may end still improving (allow_unconverged_mle): each row says so as its training summary does.
    summary = pd.read_csv(tiny_run / "results/analysis/demo/training_summary.csv")
    mle_unconverged = bool(summary.loc[summary["objective"] == "mle", "still_improving"].iloc[0])
    seed_rows = table[table["seed"] == "1"]
    assert seed_rows["mle_unconverged"].eq("yes" if mle_unconverged else "").all()
    assert ("Unconverged MLE" in text) == mle_unconverged


def test_gold_model_records_its_objective_settings(tiny_run):
    resolved = yaml.safe_load((tiny_run / "results/models/demo/gold_p/seed1/resolved_config.yaml").read_text())
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
    history = json.loads((tiny_run / "results/models/demo/gold_p/seed1/log_history.json").read_text())
    assert any("mean_return" in entry for entry in history)


def test_rerun_with_nothing_changed_runs_nothing(tiny_run):
    result = run_snakemake(tiny_run, "-n", "--configfile", str(REPO / "configs" / "smoke.yaml"))
    assert "Nothing to be done" in result.stdout + result.stderr


def test_partial_target_builds_only_its_ancestors(tmp_path):
    result = run_snakemake(tmp_path, "results/tokenizers/demo", "--cores", "1", "--configfile", str(REPO / "configs" / "smoke.yaml"))
    assert (tmp_path / "results/tokenizers/demo/tokenizer.json").exists()
    assert not (tmp_path / "results/models").exists()
    assert "train_mle" not in result.stderr


@pytest.mark.parametrize("objective", ["mle", "gold_s"])
def test_same_config_and_seed_reproduce_identical_scores(tiny_run, tmp_path, objective):
    """A second, independent run of the same config and seed on CPU gives the very same numbers."""
    target = f"results/scores/demo/{objective}/seed1/test/greedy/sample0.json"
    run_snakemake(tmp_path, target, "--cores", "2", "--configfile", str(REPO / "configs" / "smoke.yaml"))
    assert json.loads((tiny_run / target).read_text()) == json.loads((tmp_path / target).read_text())
    generations = f"results/generations/demo/{objective}/seed1/test/greedy/sample0.jsonl"
    assert (tiny_run / generations).read_text() == (tmp_path / generations).read_text()


def test_changing_a_decoder_setting_reruns_decoding_but_not_training(tiny_run, tmp_path):
    workdir = tmp_path / "copy"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    config = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
    config["tasks"]["demo"]["generation"]["length_penalty"] = 0.5
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(config))
    counts = job_counts(run_snakemake(workdir, "-n", "--quiet", "rules", "--configfile", str(changed)).stdout)
    assert not TRAINING_RULES & set(counts)
    # every model's evaluation on both splits, and everything that reads them
    assert counts["evaluate_test"] == counts["evaluate_valid"] == 5  # MLE, the control and three GOLD models
    downstream = {"main_table", "table1", "table2", "exposure_bias", "diversity", "examples", "human_eval_sheet", "objectives_table", "all"}
    downstream.add("significance")  # it reads the test outputs
    downstream |= {"nll_histogram", "nll_by_time_step"}  # their token NLL files are rewritten by the same jobs
    assert set(counts) == {"evaluate_test", "evaluate_valid"} | downstream
    assert all(counts[rule] == 1 for rule in downstream)


def test_a_report_on_stale_results_says_which_are_out_of_date(tiny_run, tmp_path):
    """The report still builds, and its front page and the terminal name what is not current (as
    `snakemake --summary` sees it, with the driver's config files and --config values) instead of a plain
    "Report created": first a changed setting, then edited data and a removed model."""
    workdir = tmp_path / "copy"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("analysis:\n  num_examples: 2\n")
    smoke = str(REPO / "configs" / "smoke.yaml")
    result = run_snakemake(workdir, "--report", "report.html", "--configfile", smoke, str(overlay), "--config", "training_logger=none")
    text = (workdir / "report.html").read_text()
    assert "WARNING: the report shows 3 result(s) that are not up to date" in result.stderr
    assert "**3 result(s) were not up to date**" in text.replace("<strong>", "**").replace("</strong>", "**")
    assert "results/tables/demo/examples.md (rule examples)" in text

    shutil.rmtree(workdir / "results/models/demo/gold_p/seed1")
    with (workdir / "results/data/demo/test.jsonl").open("a") as data:
        data.write(json.dumps({"id": "extra", "source": "a b", "target": "c d"}) + "\n")
    result = run_snakemake(workdir, "--report", "report.html", "--configfile", smoke)
    text = (workdir / "report.html").read_text()
    assert "WARNING: the report shows" in result.stderr and "result(s) were not up to date" in text
    for listed in ("results/models/demo/gold_p/seed1 (rule fine_tune): missing", "results/scores/demo/mle/seed1/test/greedy/sample0.json"):
        assert listed in text and listed in result.stderr


def test_the_end_of_the_workflow_warns_of_references_mostly_unknown_to_the_tokenizer(tiny_run, tmp_path):
    """A score file reporting 40% `<unk>` references: the rebuilt table's run ends with the warning."""
    workdir = tmp_path / "copy"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    score = workdir / "results/scores/demo/mle/seed1/test/greedy/sample0.json"
    assert json.loads(score.read_text())["unk_rate"] < 5.0  # the smoke run's own vocabulary covers its data
    score.write_text(json.dumps({**json.loads(score.read_text()), "unk_rate": 40.0}))
    result = run_snakemake(workdir, "results/tables/main.csv", "--cores", "1", "--configfile", str(REPO / "configs" / "smoke.yaml"))
    assert "WARNING: task demo, test split: 40.0% of the reference tokens are <unk>" in result.stderr


def test_changing_the_number_of_examples_reruns_only_the_examples(tiny_run, tmp_path):
    workdir = tmp_path / "copy"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    config = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
    config["analysis"]["num_examples"] = 4
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(config))
    counts = job_counts(run_snakemake(workdir, "-n", "--quiet", "rules", "--configfile", str(changed)).stdout)
    assert counts == {"examples": 1, "all": 1}


def test_changing_one_decoder_reruns_only_its_runs(tiny_run, tmp_path):
    config = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
    config["decoders"] = {**config["decoders"], "beam3": {"num_beams": 4}}
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(config))
    counts = job_counts(run_snakemake(tiny_run, "-n", "--quiet", "rules", "--configfile", str(changed)).stdout)
    # each model's dev runs, and the tables that read them; the analyses read test outputs
    assert counts == {"evaluate_valid": 5, "table2": 1, "objectives_table": 1, "all": 1}


def test_one_figure_is_a_partial_target(tmp_path):
    counts = job_counts(run_snakemake(tmp_path, "results/figures/demo/nll_histogram.png", "-n", "--quiet", "rules").stdout)
    assert counts["nll_histogram"] == 1 and counts["evaluate_test"] == 3  # MLE, the control and GOLD-s of seed 1, test split
    assert not {"evaluate_valid", "main_table", "table2"} & set(counts)


def test_table2_is_built_from_the_sweep_scores(tiny_run):
    table = pd.read_csv(tiny_run / "results/tables/table2_decoding.csv")
    assert list(dict.fromkeys(table["decoder"])) == ["greedy", "beam3", "topk5"]
    row = table[(table["decoder"] == "topk5") & (table["objective"] == "gold_p")].iloc[0]
    runs = [json.loads((tiny_run / f"results/scores/demo/gold_p/seed1/valid/topk5/sample{n}.json").read_text())["bleu"] for n in (1, 2)]
    assert row["mean"] == pytest.approx(sum(runs) / 2, abs=1e-4) and row["n_samples"] == 2
    greedy = json.loads((tiny_run / "results/scores/demo/gold_p/seed1/valid/greedy/sample0.json").read_text())["bleu"]
    assert row["drop_from_greedy"] == pytest.approx(greedy - sum(runs) / 2, abs=1e-3)


def test_sampling_runs_differ_and_reproduce(tiny_run, tmp_path):
    first, second = (tiny_run / f"results/generations/demo/mle/seed1/valid/topk5/sample{n}.jsonl" for n in (1, 2))
    assert first.read_text() != second.read_text()
    target = "results/generations/demo/mle/seed1/valid/topk5/sample2.jsonl"
    shutil.copytree(tiny_run / "results", tmp_path / "results", symlinks=True)
    (tmp_path / target).unlink()
    run_snakemake(tmp_path, target, "--cores", "1", "--configfile", str(REPO / "configs" / "smoke.yaml"))
    assert (tmp_path / target).read_text() == second.read_text()


def test_analyses_read_the_analysis_models(tiny_run):
    summary = pd.read_csv(tiny_run / "results/analysis/demo/nll_summary.csv")
    assert summary["objective"].tolist() == ["mle", "mle_continued", "gold_delta", "gold_p", "gold_s"]
    nll = pd.read_parquet(tiny_run / "results/token_nll/demo/gold_s/seed1/test.parquet")
    assert summary.iloc[4]["tokens"] == len(nll)
    diversity = pd.read_csv(tiny_run / "results/tables/demo/diversity.csv")
    assert diversity["system"].tolist()[0] == "reference" and len(diversity) == 6
    key = pd.read_csv(tiny_run / "results/human_eval/demo/key.csv")
    assert len(key) == 10 and set(key["system_a"]) | set(key["system_b"]) == {"MLE", "GOLD-s"}


@pytest.fixture(scope="module")
def report(tiny_run) -> Path:
    path = tiny_run / "report.html"
    run_snakemake(tiny_run, "--report", str(path), "--configfile", str(REPO / "configs" / "smoke.yaml"))
    return path


REPORTED = ["results/figures/demo/nll_histogram.png", "results/figures/demo/nll_by_time_step.png", "results/figures/demo/exposure_bias.png"]
REPORTED += ["results/figures/demo/training_curves.png", "results/figures/objectives.png"]
REPORTED_TABLES = ("main", "table1_main", "table2_decoding", "objectives", "demo/diversity", "demo/examples")
REPORTED += [f"results/tables/{name}.html" for name in REPORTED_TABLES]


def test_report_builds_into_one_self_contained_file(report):
    text = report.read_text()
    assert len(text) > 100_000  # figures and tables are embedded, not linked
    assert "Every result in this report was up to date when the report was created" in text
    for name in REPORTED:
        assert name in text


def test_the_report_shows_every_table_and_figure_in_a_browser(report):
    """Opened in headless Chromium as a reader would: no console errors, and every figure and table of
    the run shows in the report itself (screenshots in the run's report_screenshots/)."""
    if not (CHROMIUM and CHROMEDRIVER and importlib.util.find_spec("selenium")):
        if os.environ.get("GOLD_REQUIRE_BROWSER") == "1":
            pytest.fail("GOLD_REQUIRE_BROWSER=1 but chromium, chromedriver or selenium is missing")
        pytest.skip("needs chromium and chromium-driver (apt) and selenium (make setup)")
    visit = browse_report(report, report.parent / "report_screenshots")
    assert not visit.console_errors
    assert sorted(visit.shown) == sorted(REPORTED)
    for name, shown in visit.shown.items():
        if name.endswith(".png"):
            assert shown.startswith("image"), name
        else:
            rows = int(shown.split()[2])
            assert rows >= 3, f"{name} shows {shown}"
    table1 = visit.shown["results/tables/table1_main.html"]
    assert "gold_s" in table1 and "perplexity" in table1


def test_deleting_one_gold_model_rebuilds_only_its_branch(tiny_run, tmp_path):
    """Snakemake leaves a missing intermediate alone while everything after it is up to date; asking for the
    deleted model retrains that one job, and the next run redoes only what depends on it."""
    workdir = tmp_path / "copy"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    smoke = ("--configfile", str(REPO / "configs" / "smoke.yaml"))
    shutil.rmtree(workdir / "results/models/demo/gold_p/seed1")
    model = job_counts(run_snakemake(workdir, "results/models/demo/gold_p/seed1", "-n", "--quiet", "rules", *smoke).stdout)
    assert model == {"fine_tune": 1}
    run_snakemake(workdir, "results/models/demo/gold_p/seed1", "--cores", "2", *smoke)
    counts = job_counts(run_snakemake(workdir, "-n", "--quiet", "rules", *smoke).stdout)
    assert not {"fine_tune", "train_mle", "cache_rewards", "prepare_dataset", "train_tokenizer"} & set(counts)
    # GOLD-p's own evaluation jobs, one per split
    assert counts["evaluate_test"] == counts["evaluate_valid"] == 1
    assert counts["table1"] == counts["table2"] == counts["nll_histogram"] == 1


def test_lead3_and_the_paper_comparison_reuse_the_trained_models(tiny_run, tmp_path):
    """Adding a baseline and the paper's numbers to a finished run only scores lead-3 and builds the
    comparison (the numbers below are made up for the test; configs/paper.yaml holds the paper's)."""
    workdir = tmp_path / "copy"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    reported = {"mle": {"bleu": 10.0, "perplexity": 3.0}, "gold_s": {"bleu": 20.0, "rouge2": 5.0}, "lead3": {"rouge2": 1.0}}
    overlay = tmp_path / "compare.yaml"
    overlay.write_text(
        yaml.safe_dump({"tasks": {"demo": {"baselines": ["lead3"], "paper_results": [{"table": "T", "model": "M", "results": reported}]}}})
    )
    targets = ("results/tables/paper_comparison.csv", "results/baselines/demo/lead3/test.json")
    configs = ("--configfile", str(REPO / "configs" / "smoke.yaml"), str(overlay))
    assert job_counts(run_snakemake(workdir, *targets, "-n", "--quiet", "rules", *configs).stdout) == {"lead3": 1, "paper_comparison": 1}
    run_snakemake(workdir, *targets, "--cores", "1", *configs)

    table = pd.read_csv(workdir / "results/tables/paper_comparison.csv")
    assert len(table) == 5
    main = pd.read_csv(workdir / "results/tables/main.csv", dtype={"seed": str})
    for objective, metric in (("mle", "bleu"), ("mle", "perplexity"), ("gold_s", "bleu")):
        row = table[(table["objective"] == objective) & (table["metric"] == metric)].iloc[0]
        ours = main[(main["objective"] == objective) & (main["seed"] == "mean")].iloc[0][metric]
        assert row["ours"] == pytest.approx(ours, rel=1e-3)
        assert row["difference"] == pytest.approx(ours - reported[objective][metric], rel=1e-3)
        assert row["ours_ci_low"] <= row["ours"] <= row["ours_ci_high"]
    lead3 = json.loads((workdir / "results/baselines/demo/lead3/test.json").read_text())
    assert table[table["objective"] == "lead3"].iloc[0]["ours"] == pytest.approx(lead3["rouge2"], rel=1e-3)
    assert "| demo | T | test, greedy | gold_s | rouge2 | 5.00 |" in (workdir / "results/tables/paper_comparison.md").read_text()


def test_training_curves_mark_each_runs_selected_checkpoint(tiny_run):
    summary = pd.read_csv(tiny_run / "results/analysis/demo/training_summary.csv")
    assert len(summary) == 5  # MLE, the control and the three GOLD objectives, seed 1
    for row in summary.itertuples():
        provenance = json.loads((tiny_run / f"results/models/demo/{row.objective}/seed{row.seed}/provenance.json").read_text())
        assert f"checkpoint-{row.selected_step}" == provenance["best_checkpoint"]
    curves = pd.read_csv(tiny_run / "results/analysis/demo/training_curves.csv")
    gold = curves[curves["objective"] == "gold_s"]
    assert {"dev_metric", "train_loss", "mean_weight", "mean_return"} <= set(gold["curve"])
