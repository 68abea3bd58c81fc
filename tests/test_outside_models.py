"""Models trained elsewhere through the workflow (config tasks.<task>.imported_models, rule import_model):
decoded, scored and tabled like the workflow's own, with no training job; a checkpoint rewritten reruns its
evaluation alone; a causal LM and a LoRA adapter load as the workflow's decoder-only models; the configs
that cannot work are refused with the key to change."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest
import torch
import yaml
from chat_models import conversations, tiny_chat_model
from conftest import REPO, job_counts, run_snakemake
from transformers import AutoModelForCausalLM

from gold_textgen.config.layers import merged_config
from gold_textgen.config.schema import validate_config
from gold_textgen.data.tokenization import load_tokenizer
from gold_textgen.model_exchange.import_record import checked_import, tokenizer_folder, write_import_record
from gold_textgen.model_exchange.imported import load_saved_model
from gold_textgen.models.input_contract import reads_prompt_completion
from gold_textgen.runtime.errors import ConfigError

SMOKE = REPO / "configs" / "smoke.yaml"


def hypotheses(path) -> list[str]:
    return [json.loads(line)["hypothesis"] for line in path.read_text().splitlines()]


@pytest.mark.workflow
@pytest.mark.slow
def test_models_trained_elsewhere_are_tabled_with_no_training_job(tiny_run, tmp_path):
    """The smoke run's models imported into a new experiment: its MLE and control in their own places, its
    GOLD-s beside them under another name. Their outputs are the smoke run's, the tables and significance
    compare them, and a rewritten checkpoint reruns its own import and evaluation only."""
    models = tiny_run / "results/smoke/models/demo"
    overlay = {
        "experiment": {"name": "outside", "objectives": ["mle", "mle_continued"]},
        "tasks": {
            "demo": {
                "imported_models": {
                    "mle": {"path": f"{models}/mle/seed{{seed}}"},
                    "mle_continued": {"path": f"{models}/mle_continued/seed{{seed}}"},
                    "their_gold": {"path": f"{models}/gold_s/seed1"},  # one checkpoint, every seed's
                }
            }
        },
    }
    (tmp_path / "outside.yaml").write_text(yaml.safe_dump(overlay))
    configs = ["--configfile", str(SMOKE), str(tmp_path / "outside.yaml")]
    tables = ["results/outside/tables/main.csv", "results/outside/tables/significance.csv"]
    result = run_snakemake(tmp_path, "--cores", "2", *tables, *configs)
    assert "rule train_mle" not in result.stderr and "rule fine_tune" not in result.stderr

    outputs = tmp_path / "results/outside"
    for imported, trained in (("mle", "mle"), ("mle_continued", "mle_continued"), ("their_gold", "gold_s")):
        run = "seed1/test/greedy/sample0.jsonl"
        assert hypotheses(outputs / f"generations/demo/{imported}/{run}") == hypotheses(
            tiny_run / f"results/smoke/generations/demo/{trained}/{run}"
        )
    table = pd.read_csv(outputs / "tables/main.csv", dtype={"seed": str})
    assert list(dict.fromkeys(table["objective"])) == ["mle", "mle_continued", "their_gold"]
    smoke = pd.read_csv(tiny_run / "results/smoke/tables/main.csv", dtype={"seed": str}).set_index(["objective", "seed"])
    ours = table.replace({"their_gold": "gold_s"}).set_index(["objective", "seed"])
    assert ours["bleu"].equals(smoke.loc[ours.index, "bleu"]) and ours["perplexity"].equals(smoke.loc[ours.index, "perplexity"])
    significance = pd.read_csv(outputs / "tables/significance.csv")
    compared = set(zip(significance["objective"], significance["baseline"], strict=True))
    assert compared == {("mle_continued", "mle"), ("their_gold", "mle"), ("their_gold", "mle_continued")}
    for name in ("main", "significance"):  # every row is an imported model's, and says so
        assert set(pd.read_csv(outputs / f"tables/{name}.csv", keep_default_na=False)["imported"]) == {"yes"}, name
    assert pd.read_csv(outputs / "analysis/demo/training_summary.csv").empty  # nothing trained, nothing marked

    weights = models / "gold_s/seed1/model.safetensors"
    os.utime(weights, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns + 10**9))
    plan = run_snakemake(tmp_path, "-n", *tables, *configs).stdout
    counts = job_counts(plan)
    assert counts["import_model"] == 1 and counts["evaluate_test"] == 1 and "train_mle" not in counts
    assert "results/outside/models/demo/their_gold/seed1" in plan


@pytest.mark.workflow
def test_an_imported_model_is_planned_beside_the_trained_ones(tmp_path):
    """Planned beside the trained models once its folders are there; before, the plan stops naming the key
    and the seed whose folder is missing."""
    overlay = {"tasks": {"demo": {"imported_models": {"outside": {"path": "elsewhere/seed{seed}"}}}}}
    (tmp_path / "beside.yaml").write_text(yaml.safe_dump(overlay))
    refused = run_snakemake(tmp_path, "-n", "--configfile", str(tmp_path / "beside.yaml"), check=False)
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "tasks.demo.imported_models.outside.path: elsewhere/seed1 (seed 1) is not a folder" in said
    seeds = len(yaml.safe_load((REPO / "config.yaml").read_text())["experiment"]["seeds"])
    for seed in range(1, seeds + 1):
        (tmp_path / f"elsewhere/seed{seed}").mkdir(parents=True)
    counts = job_counts(run_snakemake(tmp_path, "-n", "--configfile", str(tmp_path / "beside.yaml")).stdout)
    assert counts["import_model"] == seeds and counts["train_mle"] == seeds and counts["fine_tune"] == 2 * seeds
    assert counts["evaluate_test"] == 4 * seeds  # mle, the control, GOLD-s and the imported model


def test_a_model_trained_from_an_imported_one_is_refused_with_the_key_to_change():
    config = merged_config(REPO / "config.yaml", [])
    config["tasks"]["demo"]["imported_models"] = {"mle": {"path": "elsewhere"}}  # the control and GOLD-s start from it
    with pytest.raises(ConfigError, match=r"tasks\.demo\.objectives\.mle_continued\.start_from: 'mle' is imported"):
        validate_config(config)
    config = merged_config(REPO / "config.yaml", [])
    config["experiment"]["objectives"] = []
    with pytest.raises(ConfigError, match="no model to evaluate"):
        validate_config(config)


def test_one_checkpoint_against_one_checkpoint_is_not_counted_as_several_seeds():
    """Two fixed checkpoints decode alike under every seed: three seeds would be one comparison thrice."""
    config = merged_config(REPO / "config.yaml", [])
    config["experiment"]["objectives"] = ["mle"]
    config["tasks"]["demo"]["imported_models"] = {"mle": {"path": "sft"}, "tuned": {"path": "tuned"}}
    with pytest.raises(ConfigError, match=r"imported_models\.tuned\.path: one checkpoint for every seed, compared with mle"):
        validate_config(config)
    config["experiment"]["seeds"] = [1]
    validate_config(config)
    config["experiment"]["seeds"] = [1, 2, 3]
    config["tasks"]["demo"]["imported_models"]["mle"]["path"] = "sft/seed{seed}"
    validate_config(config)


def test_a_checkpoint_that_is_not_a_model_folder_is_named_with_its_key(tmp_path):
    key = "tasks.demo.imported_models.mine.path"
    with pytest.raises(ConfigError, match=rf"config key {key}: .*missing is not a folder"):
        checked_import(tmp_path / "missing", None, key)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="holds neither a model"):
        checked_import(tmp_path / "empty", None, key)
    (tmp_path / "adapter").mkdir()
    (tmp_path / "adapter" / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": None}))
    with pytest.raises(ConfigError, match="names no base model; set `base`"):
        checked_import(tmp_path / "adapter", None, key)
    assert not (tmp_path / "record").exists()


def test_a_causal_lm_and_a_lora_adapter_load_as_the_workflows_decoder_only_models(tmp_path):
    """A plain causal LM folder, and a LoRA adapter over it (its base named by its own adapter_config), load
    in the prompt -> completion contract with the weights they hold: the adapter merged gives the adapted
    model's logits, and the tokenizer comes from the base when the adapter has none."""
    from peft import LoraConfig, get_peft_model

    tiny_chat_model(tmp_path / "base", [turn["content"] for row in conversations(4) for turn in row["messages"]])
    torch.manual_seed(0)
    adapted = get_peft_model(
        AutoModelForCausalLM.from_pretrained(tmp_path / "base"), LoraConfig(r=4, target_modules="all-linear", init_lora_weights=False)
    )
    adapted.save_pretrained(tmp_path / "adapter")
    ids = torch.tensor([[5, 9, 17, 3, 8]])
    key = "tasks.demo.imported_models.mine.path"
    for name, checkpoint in (("plain", tmp_path / "base"), ("lora", tmp_path / "adapter")):
        write_import_record(tmp_path / name, checked_import(checkpoint, None, key))
        assert tokenizer_folder(tmp_path / name) == (tmp_path / "base").resolve()
        model = load_saved_model(tmp_path / name, load_tokenizer(tokenizer_folder(tmp_path / name))).eval()
        assert reads_prompt_completion(model)
        expected = (adapted if name == "lora" else AutoModelForCausalLM.from_pretrained(tmp_path / "base")).eval()
        with torch.no_grad():
            assert torch.allclose(model.language_model(input_ids=ids).logits, expected(input_ids=ids).logits, atol=1e-5), name
