"""`gold-textgen sft --config x.yaml` (training/sft_command.py): TRL's own SFT arguments plus a loss block
train a causal LM with an objective of the catalog through ObjectiveSFTTrainer. Here GOLD-s with a LoRA
adapter on a 20-example conversational jsonl, the loss on the assistant's turns alone (the tokenizer's chat
template), on a tiny local model: seconds."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
import yaml
from chat_models import conversations, tiny_chat_model
from click.testing import CliRunner

from gold_textgen.cli.main import main

pytestmark = pytest.mark.trl
PAGE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "sft-command.md"


def test_the_guides_gold_s_with_lora_on_a_conversational_jsonl_trains_and_saves_the_adapter(tmp_path):
    """docs/guide/sft-command.md's YAML as written, with a tiny local model, 20 conversations and 3 updates."""
    data = conversations(20)
    (tmp_path / "train.jsonl").write_text("".join(json.dumps(row) + "\n" for row in data))
    tiny_chat_model(tmp_path / "model", [turn["content"] for row in data for turn in row["messages"]])
    config = yaml.safe_load(re.search(r"```yaml\n(.*?)```", PAGE.read_text(), re.S).group(1))  # the page's own block
    config.update(  # this machine's model, data and budget: seconds on a CPU
        model_name_or_path=str(tmp_path / "model"),
        datasets=[{**config["datasets"][0], "data_files": str(tmp_path / "train.jsonl")}],
        output_dir=str(tmp_path / "out"),
        max_steps=3,
        per_device_train_batch_size=4,
        learning_rate=1e-3,
        logging_steps=1,
        report_to="none",
        use_cpu=True,
        bf16=False,
        lora_r=4,
    )
    config["loss"]["sync_every"] = 2
    (tmp_path / "sft.yaml").write_text(yaml.safe_dump(config))
    result = CliRunner().invoke(main, ["sft", "--config", str(tmp_path / "sft.yaml")])
    assert result.exit_code == 0, result.output + repr(result.exception)
    assert (tmp_path / "out" / "adapter_config.json").is_file() and (tmp_path / "out" / "adapter_model.safetensors").is_file()
    state = json.loads(sorted((tmp_path / "out").glob("checkpoint-*/trainer_state.json"))[-1].read_text())
    losses = [entry["loss"] for entry in state["log_history"] if "loss" in entry]
    assert len(losses) == 3 and all(math.isfinite(loss) for loss in losses)


def test_a_config_without_a_loss_block_is_refused_by_name(tmp_path):
    (tmp_path / "sft.yaml").write_text(yaml.safe_dump({"model_name_or_path": "x", "output_dir": str(tmp_path)}))
    result = CliRunner().invoke(main, ["sft", "--config", str(tmp_path / "sft.yaml")])
    assert result.exit_code == 1 and "no `loss` block" in result.output
