"""Decoder-only language models through the whole workflow: configs/causal_demo.yaml run for real at test
size (MLE = SFT, GOLD-s from its cached rewards, Table 1 and the figures; the control is the MLE loss
continued, the same code on every model family), and configs/causal.yaml
(GSM8K with a pretrained causal LM) planned on the paper-style grid."""

from __future__ import annotations

import copy
import json

import pandas as pd
import pytest
import yaml
from conftest import REPO, job_counts, run_snakemake
from exported_models import check_export
from safetensors import safe_open

pytestmark = [pytest.mark.workflow, pytest.mark.slow]
TEST_SIZED = {
    # The base's name kept: test-sized settings of the causal demo itself (an unnamed overlay gets its own folder).
    "experiment": {
        "name": "causal_demo",
        "objectives": ["mle", "gold_s"],
        "seeds": [1],
        "allow_unconverged_mle": True,
        "sweep_decoders": [],
    },
    "analysis": {"num_examples": 3, "human_eval_items": 10, "bootstrap_resamples": 200},
    "tasks": {
        "demo": {
            "source": {"num_train": 300, "num_valid": 30, "num_test": 30, "max_length": 10},
            "max_source_length": 16,
            "max_target_length": 16,
            "model": {"d_model": 32, "decoder_layers": 2, "attention_heads": 2, "ffn_dim": 64, "max_position_embeddings": 32},
            "mle": {"max_steps": 20, "eval_steps": 10, "warmup_steps": 5, "batch_size": 32, "eval_max_examples": 30},
            "fine_tune": {"max_steps": 10, "eval_steps": 5, "warmup_steps": 2, "batch_size": 32, "eval_max_examples": 30, "sync_every": 4},
            "generation": {"max_new_tokens": 15},
        }
    },
}
NEW_TOKENS = TEST_SIZED["tasks"]["demo"]["generation"]["max_new_tokens"]


FIGURES = ("nll_histogram", "exposure_bias")


def test_the_causal_demo_runs_through_the_workflow(tmp_path):
    overlay = tmp_path / "test_sized.yaml"
    overlay.write_text(yaml.safe_dump(TEST_SIZED))
    targets = ["results/causal_demo/tables/table1_main.csv", *(f"results/causal_demo/figures/demo/{figure}.png" for figure in FIGURES)]
    run_snakemake(tmp_path, "--cores", "2", *targets, "--configfile", str(REPO / "configs" / "causal_demo.yaml"), str(overlay))

    model_config = yaml.safe_load((tmp_path / "results/causal_demo/models/demo/gold_s/seed1/config.json").read_text())
    assert model_config["model_type"] == "prompt_completion_lm" and model_config["language_model"]["model_type"] == "qwen2"
    table = pd.read_csv(tmp_path / "results/causal_demo/tables/table1_main.csv", dtype={"seed": str})
    assert set(table["family"]) == {"causal"}
    assert list(dict.fromkeys(table["objective"])) == ["mle", "gold_s"]
    scores = table[table["seed"] == "1"].set_index("objective")
    assert scores["perplexity"].between(1, 1e4).all() and scores["bleu"].ge(0).all()
    generations = (tmp_path / "results/causal_demo/generations/demo/gold_s/seed1/test/greedy/sample0.jsonl").read_text().splitlines()
    assert len(generations) == 30  # one completion per test prompt, the prompt left out
    for figure in FIGURES:
        assert (tmp_path / f"results/causal_demo/figures/demo/{figure}.png").stat().st_size > 0
    for objective in ("mle", "gold_s"):  # every model leaves the workflow: transformers and lm-eval load it
        run = f"demo/{objective}/seed1"
        generated = tmp_path / f"results/causal_demo/generations/{run}/test/greedy/sample0.jsonl"
        check_export(tmp_path / f"results/causal_demo/models/{run}", tmp_path / f"exported/{objective}", generated, NEW_TOKENS, lora=False)
    comes_back_the_same(tmp_path)


def comes_back_the_same(tmp_path):
    """The exports imported by another experiment (`imported_models`, in the models' own places): the same
    outputs on all 30 test prompts and the same scores, and every table and claim marks the rows imported."""
    roundtrip = copy.deepcopy(TEST_SIZED)
    roundtrip["experiment"]["name"] = "causal_roundtrip"
    roundtrip["tasks"]["demo"]["imported_models"] = {name: {"path": str(tmp_path / f"exported/{name}")} for name in ("mle", "gold_s")}
    (tmp_path / "roundtrip.yaml").write_text(yaml.safe_dump(roundtrip))
    target = "results/causal_roundtrip/tables/table1_main.csv"
    layers = ("--configfile", str(REPO / "configs" / "causal_demo.yaml"), str(tmp_path / "roundtrip.yaml"))
    result = run_snakemake(tmp_path, "--cores", "2", target, *layers)
    assert "train_mle" not in job_counts(result.stdout) and "fine_tune" not in job_counts(result.stdout)
    experiments = [tmp_path / "results" / name for name in ("causal_demo", "causal_roundtrip")]
    for objective in ("mle", "gold_s"):
        run = f"demo/{objective}/seed1/test/greedy/sample0"
        outputs = [
            [json.loads(line)["hypothesis"] for line in (results / f"generations/{run}.jsonl").read_text().splitlines()]
            for results in experiments
        ]
        assert len(outputs[0]) == 30 and outputs[0] == outputs[1], objective
        scores = [json.loads((results / f"scores/{run}.json").read_text()) for results in experiments]
        for metric in ("perplexity", "bleu", "chrf", "unk_rate"):
            assert scores[1][metric] == pytest.approx(scores[0][metric], rel=1e-5), (objective, metric)
    table = pd.read_csv(tmp_path / target, dtype={"seed": str}, keep_default_na=False)
    assert set(table["imported"]) == {"yes"}


def test_gold_s_with_lora_adapters_runs_through_the_workflow(tmp_path):
    """`model.lora`: SFT trains an adapter over the frozen base, GOLD-s (online rewards) reads pi_tilde and
    the frozen SFT model as two more adapters of that base, and the saved model holds the policy's adapter
    alone and decodes."""
    overlay = copy.deepcopy(TEST_SIZED)
    demo = overlay["tasks"]["demo"]
    demo["model"]["lora"] = {"r": 4}
    demo["fine_tune"]["rewards"] = "online"
    (tmp_path / "lora.yaml").write_text(yaml.safe_dump(overlay))
    target = "results/causal_demo/generations/demo/gold_s/seed1/test/greedy/sample0.jsonl"
    run_snakemake(tmp_path, "--cores", "2", target, "--configfile", str(REPO / "configs" / "causal_demo.yaml"), str(tmp_path / "lora.yaml"))

    model_dir = tmp_path / "results/causal_demo/models/demo/gold_s/seed1"
    assert json.loads((model_dir / "config.json").read_text())["lora"] == {
        "r": 4,
        "alpha": 16,
        "dropout": 0.0,
        "target_modules": "all-linear",
    }
    keys = set(safe_open(str(model_dir / "model.safetensors"), "pt").keys())
    assert any(".lora_A.default." in key for key in keys)
    assert not any(".lagged_policy." in key or ".frozen_start." in key for key in keys)  # the helpers' adapters stay out
    assert len((tmp_path / target).read_text().splitlines()) == 30
    for objective in ("mle", "gold_s"):  # merged, and as a peft adapter over the exported base
        model_dir = tmp_path / f"results/causal_demo/models/demo/{objective}/seed1"
        check_export(model_dir, tmp_path / f"exported/{objective}", tmp_path / target, NEW_TOKENS, lora=True)


def test_the_gsm8k_experiment_plans_sft_gold_dft_and_the_control_on_three_seeds(tmp_path):
    result = run_snakemake(tmp_path, "-n", "--quiet", "rules", "--configfile", str(REPO / "configs" / "causal.yaml"))
    counts = job_counts(result.stdout)
    assert counts["train_mle"] == 3 and counts["fine_tune"] == 9  # (GOLD-s, DFT, the control) x 3 seeds
    assert counts["cache_rewards"] == 3 and counts["prepare_dataset"] == 1
    assert "train_tokenizer" not in counts  # the pretrained model brings its tokenizer
