"""`gold-textgen sft --config x.yaml`: any objective of the catalog on your own causal LM, the way `trl sft`
runs one. The YAML is TRL's own (`ScriptArguments`, `SFTConfig`, `ModelConfig` and the dataset mixture:
`model_name_or_path`, `dataset_name` or `datasets` with local jsonl/parquet files, `use_peft` and `lora_*`,
`assistant_only_loss` for conversational data through the tokenizer's chat template, every training
argument), read by TRL's parser, plus one block of this project's:

    loss:
      loss: gold            # a row of the loss catalog (docs/reference/objectives.md)
      reward: s             # its settings, as in a workflow config's objective entry
      sync_every: 100
      reference_model: ...  # the frozen SFT model (default: model_name_or_path; with use_peft, the starting adapter)

and it trains `ObjectiveSFTTrainer` with that objective (sft_trainer.py), then saves the model (the adapter,
with `use_peft`) to `output_dir`.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import yaml

from ..runtime.errors import ConfigError


def split_config(path: Path) -> tuple[dict, dict]:
    """(the `loss` block, the rest: TRL's arguments) of the YAML at `path`."""
    config = yaml.safe_load(path.read_text())
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: a YAML mapping of TRL's arguments and a `loss` block")
    loss = config.pop("loss", None)
    if not isinstance(loss, dict) or "loss" not in loss:
        raise ConfigError(f"{path}: no `loss` block naming a loss of the catalog (loss: {{loss: gold, reward: s}})")
    return loss, config


def trl_arguments(arguments: dict):
    """TRL's dataclasses from its own parser, as `trl sft --config` reads them."""
    from trl import DatasetMixtureConfig, ModelConfig, ScriptArguments, SFTConfig, TrlParser

    parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig, DatasetMixtureConfig))
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as file:
        yaml.safe_dump(arguments, file)
        file.flush()
        return parser.parse_args_and_config(args=["--config", file.name])


def run_sft(config_path: Path) -> Path:
    """Train as the config at `config_path` says; returns the output folder."""
    from datasets import load_dataset
    from transformers import AutoModelForCausalLM
    from trl import get_dataset, get_peft_config

    from .sft_trainer import ObjectiveSFTTrainer
    from .trainer_losses import ObjectiveLoss

    loss_block, arguments = split_config(config_path)
    script, training, model_arguments, mixture = trl_arguments(arguments)
    if mixture.datasets:
        dataset = get_dataset(mixture)
    elif script.dataset_name:
        dataset = load_dataset(script.dataset_name, name=script.dataset_config)
    else:
        raise ConfigError(f"{config_path}: name the data with `dataset_name` or `datasets` (local files: path: json, data_files: ...)")
    peft = get_peft_config(model_arguments)
    settings = dict(loss_block)
    reference = settings.pop("reference_model", None) or (None if peft else model_arguments.model_name_or_path)
    load = {"revision": model_arguments.model_revision, "dtype": model_arguments.dtype}
    objective = ObjectiveLoss(
        settings.pop("loss"),
        reference_model=AutoModelForCausalLM.from_pretrained(reference, **load) if reference else None,
        **settings,
    )
    training.model_init_kwargs = {**load, **(training.model_init_kwargs or {})}
    trainer = ObjectiveSFTTrainer(
        model=model_arguments.model_name_or_path,
        args=training,
        train_dataset=dataset[script.dataset_train_split],
        eval_dataset=dataset[script.dataset_test_split] if training.eval_strategy != "no" else None,
        peft_config=peft,
        objective=objective,
    )
    trainer.train(resume_from_checkpoint=training.resume_from_checkpoint)
    trainer.save_model(training.output_dir)
    return Path(training.output_dir)
