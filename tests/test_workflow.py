"""The workflow's plan, checked by dry runs: the DAG, partial targets, and config errors stopped at parse
time with the key and file named."""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml
from conftest import REPO, SNAKEMAKE, driver_environment, job_counts, run_snakemake

pytestmark = pytest.mark.workflow
# The default experiment: one task, MLE, the control and three GOLD objectives, two seeds (10 models); each model has one
# evaluation job per split: greedy decoding of the test split, and the Table 2 sweep of the dev split
# (greedy, beam 3, beam 5, and 3 runs each of top-k 5 and top-k 20), each with its token NLL and scores.
EXPECTED_JOBS = {
    "prepare_dataset": 1,  # train and valid
    "prepare_test_split": 1,
    "verify_dataset": 1,
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
    "claims": 1,  # the paper's registered claims the grid covers
    "nll_histogram": 1,
    "nll_by_time_step": 1,
    "exposure_bias": 1,
    "diversity": 1,
    "examples": 1,
    "human_eval_sheet": 1,
    "training_curves": 1,
    "all": 1,
}


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
    counts = job_counts(run_snakemake(tmp_path, "results/demo/models/demo/gold_s/seed2", "-n", "--quiet", "rules").stdout)
    assert counts == {"prepare_dataset": 1, "train_tokenizer": 1, "train_mle": 1, "cache_rewards": 1, "fine_tune": 1}


def test_one_figure_is_a_partial_target(tmp_path):
    counts = job_counts(run_snakemake(tmp_path, "results/demo/figures/demo/nll_histogram.png", "-n", "--quiet", "rules").stdout)
    assert counts["nll_histogram"] == 1 and counts["evaluate_test"] == 3  # MLE, the control and GOLD-s of seed 1, test split
    assert not {"evaluate_valid", "main_table", "table2"} & set(counts)


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
        ("results/demo/models/demo/gold_zz/seed1", "objective 'gold_zz' is not defined for task demo (defined: mle, gold_delta"),
        ("results/demo/generations/demo/mle/seed1/test/beam9/sample0.jsonl", "decoder 'beam9' is not defined under decoders"),
        ("results/demo/models/demo/mle/seed99", "seed 99 is not one of experiment.seeds [1, 2, 3]"),
        (
            "results/demo/scores/demo/mle/seed1/valid/topk5/sample9.json",
            "decoder 'topk5' runs sample1..sample3; sample9 is not one of them",
        ),
        ("results/demo/scores/demo/mle/seed1/test/beam3/sample0.json", "decoder 'beam3' is not run on the test split"),
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


@pytest.mark.slow
def test_a_dry_run_in_the_tests_process_says_what_a_snakemake_process_says(tmp_path):
    """The tests' dry runs run in their own process (conftest.run_snakemake, tests/snakemake_in_process.py):
    the same job table and exit status as a `snakemake` process, for a plan and for a config error, run
    after run; the test's folder and environment are put back."""
    overlay = tmp_path / "mine.yaml"
    overlay.write_text("tasks:\n  demo:\n    mle:\n      learning_rate: .nan\n")
    folder, environment = os.getcwd(), dict(os.environ)
    for arguments in (["--quiet", "rules", "--configfile", str(REPO / "configs" / "smoke.yaml")], ["--configfile", str(overlay)]):
        command = [str(SNAKEMAKE), "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path), "-n", *arguments]
        alone = subprocess.run(command, capture_output=True, text=True, timeout=300, env=driver_environment({"HF_HUB_OFFLINE": "1"}))
        for _ in range(2):
            here = run_snakemake(tmp_path, "-n", *arguments, check=False)
            assert here.returncode == alone.returncode
            assert job_counts(here.stdout) == job_counts(alone.stdout)
            assert here.stderr == alone.stderr and here.stdout.splitlines()[-3:] == alone.stdout.splitlines()[-3:]
        assert os.getcwd() == folder and dict(os.environ) == environment
    assert alone.returncode == 1 and "nan is not a finite number" in alone.stdout  # the second: the config error
    assert job_counts(run_snakemake(tmp_path, "-n", "--quiet", "rules").stdout) == EXPECTED_JOBS  # the default config again
