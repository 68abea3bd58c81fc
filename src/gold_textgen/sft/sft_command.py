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

TRL's own loss settings are read as a TRL user means them: `loss_type` names a loss of the catalog
(`nll`, `dft`), so `loss_type: dft` alone is the catalog's DFT and beside a `loss` block must name the
same loss; `label_smoothing_factor` is the loss's `label_smoothing`, and the NLL's defaults to TRL's 0 (the
other losses keep their references' defaults: docs/guide/objectives.md). The frozen model is loaded only
for a loss that reads it (GOLD-p and GOLD-s's online rewards, iw-SFT's reference policy, ASFT's anchor).
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import yaml

from ..runtime.errors import ConfigError
from .sft_checks import check_model_source, check_rows, read_yaml, reported

log = logging.getLogger(__name__)


def split_config(path: Path) -> tuple[dict, dict]:
    """(the `loss` block, the rest: TRL's arguments) of the YAML at `path`, TRL's `loss_type` and
    `label_smoothing_factor` moved into the loss block (see the module's docstring)."""
    config = read_yaml(path)
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: a YAML mapping of TRL's arguments and a `loss` block")
    loss = config.pop("loss", None)
    trl_loss = config.pop("loss_type", None)
    if loss is None and trl_loss is not None:
        loss = {"loss": "nll" if trl_loss == "chunked_nll" else trl_loss}
    if not isinstance(loss, dict) or "loss" not in loss:
        raise ConfigError(f"{path}: no `loss` block naming a loss of the catalog (loss: {{loss: gold, reward: s}})")
    if trl_loss is not None and trl_loss not in ("nll", "chunked_nll", loss["loss"]):
        raise ConfigError(f"{path}: loss_type: {trl_loss} (TRL's) and loss: {{loss: {loss['loss']}}} name two losses; keep one")
    smoothing = config.pop("label_smoothing_factor", None)
    if smoothing and "label_smoothing" in loss:
        raise ConfigError(f"{path}: label_smoothing_factor (TRL's) and the loss block's label_smoothing both set it; keep one")
    if smoothing:
        loss = {**loss, "label_smoothing": smoothing}
    elif loss["loss"] == "nll":
        loss = {"label_smoothing": 0.0, **loss}  # `trl sft`'s NLL: no smoothing unless asked for
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
    from trl import get_dataset, get_peft_config

    from .sft_trainer import ObjectiveSFTTrainer, refuse_cut_examples

    loss_block, arguments = split_config(config_path)
    with reported(config_path, "TRL's arguments"):
        script, training, model_arguments, mixture = trl_arguments(arguments)
    if training.learning_rate <= 0:
        raise ConfigError(f"{config_path}: learning_rate: {training.learning_rate} (a rate above 0)")
    check_model_source(model_arguments.model_name_or_path, "model_name_or_path", config_path)
    check_model_source(loss_block.get("reference_model"), "loss.reference_model", config_path)
    files = ", ".join(str(dataset.data_files) for dataset in mixture.datasets) if mixture.datasets else script.dataset_name
    with reported(config_path, f"the data ({files}) could not be read"):
        if mixture.datasets:
            dataset = get_dataset(mixture)
        elif script.dataset_name:
            dataset = load_dataset(script.dataset_name, name=script.dataset_config)
        else:
            raise ConfigError(f"{config_path}: name the data with `dataset_name` or `datasets` (local files: path: json, data_files: ...)")
    check_rows(dataset[script.dataset_train_split], config_path, files)
    peft = get_peft_config(model_arguments)
    objective = objective_of(loss_block, peft is not None, model_arguments, config_path)
    try:
        refuse_cut_examples(training, objective.settings)
    except ValueError as error:
        raise ConfigError(f"{config_path}: {error}") from None
    load = {"revision": model_arguments.model_revision, "dtype": model_arguments.dtype}
    training.model_init_kwargs = {**load, **(training.model_init_kwargs or {})}
    with reported(config_path, f"the model or the data ({files}) could not be prepared for training"):
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


def objective_of(loss_block: dict, peft: bool, model_arguments, config_path: Path):
    """The ObjectiveLoss of the `loss` block, with the frozen model loaded only where the loss reads it: the
    block's `reference_model`, else the starting model (with `peft`, the starting adapter instead)."""
    from transformers import AutoModelForCausalLM

    from .trainer_losses import ObjectiveLoss

    settings = dict(loss_block)
    named_reference = settings.pop("reference_model", None)
    try:
        objective = ObjectiveLoss(settings.pop("loss"), **settings)
    except ValueError as error:
        raise ConfigError(f"{config_path}: the loss block: {error}") from None
    reference = named_reference or (None if peft else model_arguments.model_name_or_path)
    if objective.settings.uses_frozen_model and reference:
        load = {"revision": model_arguments.model_revision, "dtype": model_arguments.dtype}
        with reported(config_path, f"the frozen model {reference} could not be loaded"):
            objective.use_reference_model(AutoModelForCausalLM.from_pretrained(reference, **load))
    elif named_reference:
        log.warning("reference_model %s is not loaded: the loss '%s' reads no frozen model", named_reference, objective.settings.loss)
    return objective
