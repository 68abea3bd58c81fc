"""configs/objectives.yaml: every objective of the comparison, for every seed, through the same stages."""

import pytest
import yaml
from conftest import REPO, job_counts, run_snakemake

from gold_textgen.catalog import LOSSES
from gold_textgen.config.schema import validate_config
from gold_textgen.config.views import analysis_settings, uses_mle_rewards

OBJECTIVES = REPO / "configs" / "objectives.yaml"


@pytest.fixture(scope="module")
def config() -> dict:
    base = yaml.safe_load((REPO / "config.yaml").read_text())
    overlay = yaml.safe_load(OBJECTIVES.read_text())
    base["experiment"].update(overlay["experiment"])
    base["analysis"].update(overlay["analysis"])
    base["tasks"]["demo"]["objectives"].update(overlay["tasks"]["demo"]["objectives"])
    return validate_config(base)


def test_it_compares_gold_its_ablations_its_peers_and_the_control(config):
    objectives = config["experiment"]["objectives"]
    losses = {name: config["tasks"]["demo"]["objectives"][name]["loss"] for name in objectives if name != "mle"}
    assert set(losses.values()) == set(LOSSES) - {
        "policy_gradient"
    }  # every loss of the catalog (the on-policy runs: configs/on_policy.yaml)
    assert {"gold_s_no_lag", "gold_s_u0", "gold_s_h0", "mle_continued"} <= set(objectives)
    assert config["experiment"]["seeds"] == [1, 2, 3]
    assert analysis_settings(config)["gold_objective"] == "gold_s"
    assert [name for name in objectives if name != "mle" and uses_mle_rewards(config["tasks"]["demo"]["objectives"][name])] == [
        "gold_p",
        "gold_s",
        "gold_s_no_lag",
        "gold_s_u0",
        "gold_s_h0",
        "iw_sft",
    ]


@pytest.mark.workflow
def test_dry_run_plans_every_objective_and_seed(tmp_path, config):
    counts = job_counts(run_snakemake(tmp_path, "-n", "--quiet", "rules", "--configfile", str(OBJECTIVES)).stdout)
    models = len(config["experiment"]["objectives"]) * 3
    assert counts["train_mle"] == counts["cache_rewards"] == 3
    assert counts["fine_tune"] == models - 3
    assert counts["evaluate_test"] == counts["evaluate_valid"] == models
    assert counts["objectives_table"] == 1


@pytest.mark.workflow
def test_one_objective_can_be_asked_for_alone(tmp_path):
    target = "results/objectives/models/demo/tailr/seed2"
    result = run_snakemake(tmp_path, target, "-n", "--quiet", "rules", "--configfile", str(OBJECTIVES))
    assert job_counts(result.stdout) == {"prepare_dataset": 1, "train_tokenizer": 1, "train_mle": 1, "fine_tune": 1}
