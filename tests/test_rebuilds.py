"""What a change reruns: Snakemake redoes exactly the jobs a changed setting, file or deleted output
affects (on copies of the session's smoke run), and a partial target builds only its ancestors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time

import pandas as pd
import pytest
import yaml
from conftest import OFFLINE, REPO, SNAKEMAKE, driver_environment, job_counts, run_snakemake

pytestmark = pytest.mark.workflow

TABLES = {"main_table", "table1", "table2", "objectives_table", "table4"}  # they read the data checks
# These tests change the smoke folder's settings on purpose: its owner's way to say so (experiment_index).
CHANGED_ON_PURPOSE = {"GOLD_TEXTGEN_REPLACE": "smoke"}
TRAINING_RULES = {"prepare_dataset", "train_tokenizer", "train_mle", "cache_rewards", "fine_tune"}  # prepare_dataset: train, valid


def test_partial_target_builds_only_its_ancestors(tmp_path):
    result = run_snakemake(tmp_path, "results/smoke/tokenizers/demo", "--cores", "1", "--configfile", str(REPO / "configs" / "smoke.yaml"))
    assert (tmp_path / "results/smoke/tokenizers/demo/tokenizer.json").exists()
    assert not (tmp_path / "results/smoke/models").exists()
    assert "train_mle" not in result.stderr


@pytest.mark.slow
def test_a_fresh_checkout_with_newer_scripts_and_copied_results_plans_nothing(tiny_run, tmp_path):
    """Reruns follow the project's digests, not Snakemake's script-time trigger (profiles/default): the
    results and Snakemake's records of a finished run moved into a new checkout of the workflow (every
    file of it newer than the results, as after a clone or a `git pull`), every workflow script touched
    once more, and Snakemake run there as a user runs it: nothing to do."""
    checkout = tmp_path / "checkout"
    shutil.copytree(tiny_run, checkout, symlinks=True)  # results/, logs/ and .snakemake/, times kept
    for name in ("Snakefile", "config.yaml"):
        shutil.copy(REPO / name, checkout / name)  # new times, as a checkout writes them
    for folder in ("rules", "workflow_scripts", "profiles", "configs", "report", "envs"):
        shutil.copytree(REPO / folder, checkout / folder, copy_function=shutil.copy)
    later = time.time() + 60
    for script in (checkout / "workflow_scripts").glob("*.py"):
        os.utime(script, (later, later))
    command = [str(SNAKEMAKE), "-n", "--configfile", "configs/smoke.yaml"]
    result = subprocess.run(command, cwd=checkout, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Nothing to be done" in result.stdout + result.stderr, (result.stdout + result.stderr)[-3000:]


def test_a_copy_that_drops_file_times_plans_nothing_and_a_changed_input_still_reruns(tiny_run, tmp_path):
    """`cp -r` (or scp, rsync without -t): every file of the copy gets a time of its own, here shuffled so
    that outputs are older than their inputs; the recorded contents give the times back
    (runtime/file_times.py). An input whose contents then change reruns what reads it, and only that."""
    workdir = tmp_path / "copy"
    shutil.copytree(tiny_run, workdir, symlinks=True, copy_function=shutil.copy)
    files = sorted(path for path in workdir.rglob("*") if path.is_file() and not path.is_symlink())
    for rank, path in enumerate(reversed(files)):  # later in the tree, older: outputs before their inputs
        os.utime(path, (1_700_000_000 + rank, 1_700_000_000 + rank))
    config = ("--configfile", str(REPO / "configs" / "smoke.yaml"))
    result = run_snakemake(workdir, "-n", *config)
    assert "Nothing to be done" in result.stdout + result.stderr, (result.stdout + result.stderr)[-3000:]
    scores = sorted(workdir.glob("results/smoke/scores/*/*/seed*/test/greedy/sample0.json"))[0]
    scores.write_text(json.dumps({**json.loads(scores.read_text()), "edited": True}))  # the tables read it
    planned = job_counts(run_snakemake(workdir, "-n", "--quiet", "rules", *config).stdout)
    assert {"table1", "main_table"} <= set(planned) and not TRAINING_RULES & set(planned), planned


@pytest.mark.slow
def test_weights_swapped_inside_a_model_folder_rerun_what_reads_them_and_status_says_so(tiny_run, tmp_path, monkeypatch):
    """The control's weights copied over GOLD-s's (`cp -p`, times kept; the folder's time stamp untouched), in
    a checkout holding the smoke run: `gold-textgen status` names the folder and no longer says up to date,
    and the plan reruns GOLD-s's decoding, scores and the tables on the new weights, training nothing."""
    from click.testing import CliRunner

    from gold_textgen.cli.main import main

    checkout = tmp_path / "checkout"
    shutil.copytree(tiny_run, checkout, symlinks=True)
    for name in ("Snakefile", "config.yaml"):
        shutil.copy2(REPO / name, checkout / name)
    for folder in ("rules", "workflow_scripts", "profiles", "configs", "report", "envs"):
        shutil.copytree(REPO / folder, checkout / folder)
    models = checkout / "results/smoke/models/demo"
    shutil.copy2(models / "mle_continued/seed1/model.safetensors", models / "gold_s/seed1/model.safetensors")
    monkeypatch.chdir(checkout)
    status = CliRunner().invoke(main, ["status", "configs/smoke.yaml"])
    assert status.exit_code == 1 and "jobs to run" in status.output, status.output
    assert "changed since their jobs wrote them" in status.output and "gold_s/seed1" in status.output
    planned = job_counts(run_snakemake(checkout, "-n", "--quiet", "rules", "--configfile", str(REPO / "configs" / "smoke.yaml")).stdout)
    assert {"evaluate_test", "table1", "main_table"} <= set(planned) and not TRAINING_RULES & set(planned), planned


def job_starts(log) -> int:
    """How many starts a job's log records (a start's first line names the job environment); 0 without one."""
    try:
        return log.read_text().count("job environment")
    except FileNotFoundError:
        return 0


@pytest.mark.slow
def test_an_input_changed_after_the_plan_stops_the_job_that_reads_it_and_the_next_plan_takes_it(tiny_run, tmp_path):
    """GOLD-s's fine-tuning rerun (forced) on the way to Table 1; while it trains, the control's test scores
    are edited with their time kept, after the plan looked at them. The table job that reads them first
    (Table 1's or the main table's) refuses to and names the file; the next run's plan takes the edit and rebuilds the table."""
    workdir = tmp_path / "copy"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    config = ("--configfile", str(REPO / "configs" / "smoke.yaml"))
    scores = workdir / "results/smoke/scores/demo/mle_continued/seed1/test/greedy/sample0.json"
    training_log = workdir / "logs/smoke/fine_tune/demo/gold_s/seed1.log"
    logged = job_starts(training_log)
    command = [str(SNAKEMAKE), "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), "--cores", "1"]
    command += ["--forcerun", "results/smoke/models/demo/gold_s/seed1", "results/smoke/tables/table1_main.csv", *config]
    driver = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=driver_environment(OFFLINE))
    deadline, removed = time.monotonic() + 120, False
    while driver.poll() is None and time.monotonic() < deadline:  # until the fine-tuning job has started
        starts = job_starts(training_log)
        removed = removed or starts == 0  # Snakemake may remove the old log before the job writes its own
        if starts > logged or (removed and starts):
            break
        time.sleep(0.02)
    assert driver.poll() is None, "the run ended before the fine-tuning job started"
    before = scores.stat()
    scores.write_text(json.dumps({**json.loads(scores.read_text()), "bleu": 99.0}))
    os.utime(scores, ns=(before.st_atime_ns, before.st_mtime_ns))
    output, _ = driver.communicate(timeout=600)
    assert driver.returncode != 0, output[-3000:]
    # The first job to read the scores stops (Table 1's or the main table's: they run in either order).
    last_lines = {log.parent.name: log.read_text().splitlines()[-1] for log in (workdir / "logs/smoke").glob("*table*/*.log")}
    refusals = [line for line in last_lines.values() if "changed after the job that wrote it finished" in line]
    assert len(refusals) == 1, last_lines
    assert "results/smoke/scores/demo/mle_continued/seed1/test/greedy/sample0.json" in refusals[0], refusals
    planned = job_counts(run_snakemake(workdir, "-n", "--quiet", "rules", *config).stdout)
    assert "table1" in planned and not TRAINING_RULES & set(planned), planned
    run_snakemake(workdir, "--cores", "1", "results/smoke/tables/table1_main.csv", *config)


def test_changing_a_decoder_setting_reruns_decoding_but_not_training(tiny_run, tmp_path):
    workdir = tmp_path / "copy"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    config = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
    config["tasks"]["demo"]["generation"]["length_penalty"] = 0.5
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(config))
    counts = job_counts(run_snakemake(workdir, "-n", "--quiet", "rules", "--configfile", str(changed), env=CHANGED_ON_PURPOSE).stdout)
    assert not TRAINING_RULES & set(counts)
    # every model's evaluation on both splits, and everything that reads them
    assert counts["evaluate_test"] == counts["evaluate_valid"] == 5  # MLE, the control and three GOLD models
    downstream = {"main_table", "table1", "table2", "exposure_bias", "diversity", "examples", "human_eval_sheet", "objectives_table", "all"}
    downstream |= {"significance", "claims"}  # they read the test (and dev) outputs
    downstream |= {"nll_histogram", "nll_by_time_step"}  # their token NLL files are rewritten by the same jobs
    assert set(counts) == {"evaluate_test", "evaluate_valid"} | downstream
    assert all(counts[rule] == 1 for rule in downstream)


def test_changing_one_decoder_reruns_only_its_runs(tiny_run, tmp_path):
    config = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
    config["decoders"] = {**config["decoders"], "beam3": {"num_beams": 4}}
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(config))
    counts = job_counts(run_snakemake(tiny_run, "-n", "--quiet", "rules", "--configfile", str(changed), env=CHANGED_ON_PURPOSE).stdout)
    # each model's dev runs (one job decodes a model's whole sweep), and what reads them: the tables, and the
    # claims (the top-k 5 drop reads the same jobs' greedy and top-k outputs); the analyses read test outputs
    assert counts == {"evaluate_valid": 5, "table2": 1, "objectives_table": 1, "claims": 1, "all": 1}


def test_changing_the_number_of_examples_reruns_only_the_examples(tiny_run, tmp_path):
    workdir = tmp_path / "copy"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    config = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
    config["analysis"]["num_examples"] = 4
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(config))
    counts = job_counts(run_snakemake(workdir, "-n", "--quiet", "rules", "--configfile", str(changed), env=CHANGED_ON_PURPOSE).stdout)
    assert counts == {"examples": 1, "all": 1}


@pytest.mark.slow
def test_deleting_one_gold_model_rebuilds_only_its_branch(tiny_run, tmp_path):
    """Snakemake leaves a missing intermediate alone while everything after it is up to date; asking for the
    deleted model retrains that one job, and the next run redoes only what depends on it."""
    workdir = tmp_path / "copy"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    smoke = ("--configfile", str(REPO / "configs" / "smoke.yaml"))
    shutil.rmtree(workdir / "results/smoke/models/demo/gold_p/seed1")
    model = job_counts(run_snakemake(workdir, "results/smoke/models/demo/gold_p/seed1", "-n", "--quiet", "rules", *smoke).stdout)
    assert model == {"fine_tune": 1}
    run_snakemake(workdir, "results/smoke/models/demo/gold_p/seed1", "--cores", "2", *smoke)
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
    compared = {"baselines": ["lead3"], "paper_results": [{"table": "T", "model": "M", "results": reported}]}
    overlay.write_text(yaml.safe_dump({"experiment": {"name": "smoke"}, "tasks": {"demo": compared}}))  # the smoke experiment, extended
    targets = ("results/smoke/tables/paper_comparison.csv", "results/smoke/baselines/demo/lead3/test.json")
    configs = ("--configfile", str(REPO / "configs" / "smoke.yaml"), str(overlay))
    planned = run_snakemake(workdir, *targets, "-n", "--quiet", "rules", *configs, env=CHANGED_ON_PURPOSE).stdout
    assert job_counts(planned) == {"lead3": 1, "paper_comparison": 1}
    run_snakemake(workdir, *targets, "--cores", "1", *configs, env=CHANGED_ON_PURPOSE)

    table = pd.read_csv(workdir / "results/smoke/tables/paper_comparison.csv")
    assert len(table) == 5
    main = pd.read_csv(workdir / "results/smoke/tables/main.csv", dtype={"seed": str})
    for objective, metric in (("mle", "bleu"), ("mle", "perplexity"), ("gold_s", "bleu")):
        row = table[(table["objective"] == objective) & (table["metric"] == metric)].iloc[0]
        ours = main[(main["objective"] == objective) & (main["seed"] == "mean")].iloc[0][metric]
        assert row["ours"] == pytest.approx(ours, rel=1e-3)
        assert row["difference"] == pytest.approx(ours - reported[objective][metric], rel=1e-3)
        assert row["ours_ci_low"] <= row["ours"] <= row["ours_ci_high"]
    lead3 = json.loads((workdir / "results/smoke/baselines/demo/lead3/test.json").read_text())
    assert table[table["objective"] == "lead3"].iloc[0]["ours"] == pytest.approx(lead3["rouge2"], rel=1e-3)
    assert "| demo | T | test, greedy | gold_s | rouge2 | 5.00 |" in (workdir / "results/smoke/tables/paper_comparison.md").read_text()


def test_the_end_of_the_workflow_warns_of_references_mostly_unknown_to_the_tokenizer(tiny_run, tmp_path):
    """A score file reporting 40% `<unk>` references: the rebuilt table's run ends with the warning."""
    workdir = tmp_path / "copy"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    score = workdir / "results/smoke/scores/demo/mle/seed1/test/greedy/sample0.json"
    assert json.loads(score.read_text())["unk_rate"] < 5.0  # the smoke run's own vocabulary covers its data
    score.write_text(json.dumps({**json.loads(score.read_text()), "unk_rate": 40.0}))
    result = run_snakemake(workdir, "results/smoke/tables/main.csv", "--cores", "1", "--configfile", str(REPO / "configs" / "smoke.yaml"))
    assert "WARNING: task demo, test split: 40.0% of the reference tokens are <unk>" in result.stderr


@pytest.mark.parametrize(
    ("key", "value", "reruns"),
    [
        # The test split's size: the test split, each model's test evaluation and what reads it.
        ("num_test", 30, {"prepare_test_split", "verify_dataset", "evaluate_test"}),
        # The data checks' own settings: the checks, and the tables that wait for them (seconds), nothing else.
        ("max_split_overlap", 0.5, {"verify_dataset"}),
        ("expected_sizes", {"test": 40}, {"verify_dataset"}),
    ],
)
def test_a_test_only_or_verification_setting_retrains_nothing(tiny_run, tmp_path, key, value, reruns):
    config = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
    config["tasks"]["demo"]["source"][key] = value
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(config))
    counts = job_counts(run_snakemake(tiny_run, "-n", "--quiet", "rules", "--configfile", str(changed), env=CHANGED_ON_PURPOSE).stdout)
    assert not (TRAINING_RULES | {"evaluate_valid"}) & set(counts)
    assert reruns <= set(counts)
    if "evaluate_test" not in reruns:
        assert set(counts) - TABLES == reruns | {"all"}
    else:
        assert counts["evaluate_test"] == 5  # MLE, the control and three GOLD models
