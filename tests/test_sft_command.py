"""`gold-textgen sft --config x.yaml` (sft/sft_command.py): TRL's own SFT arguments plus a loss block
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


def small_config(tmp_path: Path, **changes) -> Path:
    """A YAML for the command: a tiny local model, 4 conversations, one update."""
    data = conversations(4)
    (tmp_path / "train.jsonl").write_text("".join(json.dumps(row) + "\n" for row in data))
    if not (tmp_path / "model").is_dir():
        tiny_chat_model(tmp_path / "model", [turn["content"] for row in data for turn in row["messages"]])
    config = {
        "model_name_or_path": str(tmp_path / "model"),
        "datasets": [{"path": "json", "data_files": str(tmp_path / "train.jsonl")}],
        "output_dir": str(tmp_path / "out"),
        "max_steps": 1,
        "per_device_train_batch_size": 2,
        "report_to": "none",
        "use_cpu": True,
        "save_strategy": "no",
        **changes,
    }
    (tmp_path / "sft.yaml").write_text(yaml.safe_dump(config))
    return tmp_path / "sft.yaml"


@pytest.fixture
def at_train(monkeypatch):
    """What the command hands to `train()`: the trainer's objective and the full models alive then (the
    distinct weight sets of the transformers models the command made, counted from gc), the training
    itself skipped."""
    import gc

    from transformers import PreTrainedModel

    from gold_textgen.sft.sft_trainer import ObjectiveSFTTrainer

    def models() -> list:
        gc.collect()
        return [thing for thing in gc.get_objects() if isinstance(thing, PreTrainedModel)]

    before = models()  # held, so that no new model takes an old one's id

    def train(trainer, *args, **kwargs):
        made = [model for model in models() if not any(model is old for old in before)]
        weights = {next(model.parameters()).data_ptr() for model in made if any(True for _ in model.parameters())}
        seen.update(objective=trainer.objective, models=len(weights))

    seen = {}
    monkeypatch.setattr(ObjectiveSFTTrainer, "train", train)
    return seen


# Each catalog loss the command runs (policy gradient samples during training: the workflow runs it), and
# whether it reads the frozen model (GOLD-s's online rewards, iw-SFT's reference policy, ASFT's anchor).
READS_FROZEN = {"gold": True, "iw_sft": True, "asft": True}
REQUIRED = {"gold": {"reward": "s"}, "tailr": {"density_ratio_threshold": 0.5}, "mixce": {"mixing_ratio": 0.5}}  # no defaults
COMMAND_LOSSES = ["gold", "nll", "dft", "tailr", "mixce", "loss_truncation", "asft", "psft", "iw_sft", "probability", "eaft", "gem"]


@pytest.mark.parametrize("loss", COMMAND_LOSSES)
@pytest.mark.slow
def test_a_frozen_model_is_loaded_only_for_a_loss_that_reads_it(tmp_path, at_train, loss):
    result = CliRunner().invoke(main, ["sft", "--config", str(small_config(tmp_path, loss={"loss": loss, **REQUIRED.get(loss, {})}))])
    assert result.exit_code == 0, result.output + repr(result.exception)
    assert at_train["models"] == (2 if READS_FROZEN.get(loss) else 1), (
        loss,
        at_train["models"],
    )  # the policy, and the frozen model where read


def test_trls_loss_settings_are_read_as_trl_means_them(tmp_path, at_train):
    """`loss_type: dft` alone is the catalog's DFT; the NLL has no label smoothing unless TRL's
    label_smoothing_factor (or the loss block) sets it, GOLD keeps its reference's; two losses named, or the
    smoothing set twice, are refused by name."""
    run = lambda **changes: CliRunner().invoke(main, ["sft", "--config", str(small_config(tmp_path, **changes))])  # noqa: E731
    assert run(loss_type="dft").exit_code == 0
    assert at_train["objective"].settings.loss == "dft" and at_train["objective"].settings.label_smoothing == 0.0
    assert run(loss={"loss": "nll"}).exit_code == 0 and at_train["objective"].settings.label_smoothing == 0.0
    assert run(loss={"loss": "nll"}, label_smoothing_factor=0.1).exit_code == 0
    assert at_train["objective"].settings.label_smoothing == 0.1
    assert run(loss={"loss": "gold", "reward": "s"}).exit_code == 0 and at_train["objective"].settings.label_smoothing == 0.1
    refused = run(loss_type="dft", loss={"loss": "gold"})
    assert refused.exit_code == 1 and "loss_type: dft (TRL's) and loss: {loss: gold} name two losses" in refused.output
    refused = run(loss={"loss": "nll", "label_smoothing": 0.1}, label_smoothing_factor=0.1)
    assert refused.exit_code == 1 and "both set it" in refused.output


def test_wrapped_packing_is_refused_for_a_loss_that_reads_past_each_token(tmp_path, at_train):
    wrapped = {"packing": True, "packing_strategy": "wrapped", "max_length": 32}
    refused = CliRunner().invoke(main, ["sft", "--config", str(small_config(tmp_path, loss={"loss": "gold", "reward": "s"}, **wrapped))])
    assert refused.exit_code == 1 and "packing_strategy 'wrapped' cuts examples mid-sequence" in refused.output
    accepted = CliRunner().invoke(main, ["sft", "--config", str(small_config(tmp_path, loss={"loss": "dft"}, **wrapped))])
    assert accepted.exit_code == 0, accepted.output + repr(accepted.exception)


def _tab_indented(tmp_path: Path) -> None:
    (tmp_path / "sft.yaml").write_text("model_name_or_path: x\nloss:\n\tloss: gold\n")


def _edit(**changes):
    """A change to the small config: keys set (None removes one), or a callable run on the folder."""

    def apply(tmp_path: Path) -> None:
        config = yaml.safe_load((tmp_path / "sft.yaml").read_text())
        for key, value in changes.items():
            if value is None:
                config.pop(key, None)
            else:
                config[key] = value(tmp_path) if callable(value) else value
        (tmp_path / "sft.yaml").write_text(yaml.safe_dump(config))

    return apply


def _data(text: str):
    def write(tmp_path: Path) -> None:
        (tmp_path / "train.jsonl").write_text(text)

    return write


def _no_chat_template(tmp_path: Path) -> None:
    settings = json.loads((tmp_path / "model" / "tokenizer_config.json").read_text())
    settings.pop("chat_template", None)
    (tmp_path / "model" / "tokenizer_config.json").write_text(json.dumps(settings))
    (tmp_path / "model" / "chat_template.jinja").unlink(missing_ok=True)


# Each bad config, and the words its one-line error must hold (the file, the key or the row named).
BAD_CONFIGS = {
    "tab-indented YAML": (_tab_indented, "line 3"),
    "a missing data file": (_edit(datasets=[{"path": "json", "data_files": "missing.jsonl"}]), "missing.jsonl"),
    "a misspelt loss setting": (_edit(loss={"loss": "gold", "reward": "s", "flor": 0.1}), "flor"),
    "an unknown TRL key": (_edit(max_stepz=3), "max_stepz"),
    "another unknown TRL key": (_edit(learning_rat=0.1), "learning_rat"),
    "a negative rate": (_edit(learning_rate=-1.0), "learning_rate"),
    "a model folder that does not exist": (_edit(model_name_or_path=lambda tmp: str(tmp / "no_model")), "no_model"),
    "a reference model that does not exist": (
        _edit(loss=lambda tmp: {"loss": "gold", "reward": "s", "reference_model": str(tmp / "no_ref")}),
        "no_ref",
    ),
    "conversations without a chat template": (_no_chat_template, "chat template"),
    "an empty jsonl": (_data(""), "train.jsonl"),
    "a malformed messages row": (_data(json.dumps({"messages": "hello"}) + "\n"), "messages"),
    "floor on loss nll": (_edit(loss={"loss": "nll", "floor": 0.1}), "floor"),
}


@pytest.mark.parametrize("case", BAD_CONFIGS)
def test_a_bad_config_ends_in_one_line_naming_what_is_wrong(tmp_path, case):
    change, words = BAD_CONFIGS[case]
    small_config(tmp_path, loss={"loss": "gold", "reward": "s"})
    change(tmp_path)
    result = CliRunner().invoke(main, ["sft", "--config", str(tmp_path / "sft.yaml")])
    assert result.exit_code == 1, (case, result.output, result.exception)
    assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output, (case, result.exception)
    error = [line for line in result.output.splitlines() if line.startswith("Error: ")]
    assert error and words in error[0], (case, result.output[-2000:])
