"""Relations between settings that each pass the schema alone but together train or decode something
other than what was meant: caught when Snakemake parses the workflow, never inside a job (where a
cluster would retry them) or not at all."""

from __future__ import annotations

from pathlib import Path

from ..catalog import needs
from ..catalog.builtin_objectives import misnamed_objectives
from ..runtime.errors import ConfigError
from .views import ANSWER_METRIC_NAMES, decoder_view, is_causal, is_recurrent

SPLIT_NAMES = ("train", "valid", "test")


POSITION_MARGIN = 2  # a decoder start token and EOS around max_new_tokens


def sequence_lengths(task: dict, causal: bool) -> dict[str, int]:
    """The longest sequence each length setting of `task` gives the model (what the check compares)."""
    new_tokens = task["generation"]["max_new_tokens"]
    if causal:  # prompt and completion share one sequence
        return {
            "max_source_length + max_target_length": task["max_source_length"] + task["max_target_length"],
            "max_source_length + generation.max_new_tokens": task["max_source_length"] + new_tokens,
        }
    return {
        "max_source_length": task["max_source_length"],
        "max_target_length": task["max_target_length"],
        "generation.max_new_tokens": new_tokens + POSITION_MARGIN,
    }


def check_setting_relations(config: dict) -> None:
    for name, task in config["tasks"].items():
        _check_split_files(name, task["source"])
        _check_output_lengths(config, name, task)
        _check_schedules(name, task)
        _check_positions(name, task)
        _check_adapters(name, task)
        _check_objective_names(name, task)
        _check_case(name, task)
        _check_metric_fits_source(name, task)
        _check_reward_model(name, task)


# Sources whose references are sentences, never worked solutions with a final answer after ####.
TEXT_SOURCES = ("synthetic", "nqg_zhou2017", "iwslt14_fairseq")


def _check_metric_fits_source(name: str, task: dict) -> None:
    """A final-answer metric on a text task scores 0 for every model (and its dev selection never moves);
    the sources that may hold either (local files, the hub) are checked on their data (verify_dataset)."""
    if task["metric"] in ANSWER_METRIC_NAMES and task["source"]["kind"] in TEXT_SOURCES:
        raise ConfigError(
            f"config key tasks.{name}.metric: {task['metric']} scores final answers after '####' (GSM8K), but a "
            f"{task['source']['kind']} source's references are sentences; choose bleu or rouge2"
        )


def _check_case(name: str, task: dict) -> None:
    """A lowercasing tokenizer makes a model that writes lowercase only; BLEU compares case, and the
    references keep theirs, so every score would be cut by the case alone (ROUGE lowercases both sides)."""
    if task["model"]["kind"] == "scratch" and task["tokenizer"]["lowercase"] and task["metric"] == "bleu":
        raise ConfigError(
            f"config key tasks.{name}.tokenizer.lowercase: the model would write lowercase text only, while BLEU (the task's "
            "metric) compares it with references that keep their case; lowercase the data itself, or leave this false"
        )


def _check_reward_model(name: str, task: dict) -> None:
    """Online rewards come from the frozen starting model: an objective that needs MLE rewards and starts
    from another objective would read that objective's probabilities as "p_MLE"."""
    if task["fine_tune"]["rewards"] != "online":
        return  # the reward cache is the MLE model's, whatever an objective starts from
    for objective_name, objective in task["objectives"].items():
        if "mle_rewards" in needs(objective) and objective.get("start_from", "mle") != "mle":
            raise ConfigError(
                f"config key tasks.{name}.objectives.{objective_name}.start_from: with fine_tune.rewards: online the rewards "
                f"come from the model fine-tuning starts from, here '{objective['start_from']}', not MLE; set fine_tune.rewards: "
                "cached (the MLE model's reward cache), or start it from mle"
            )


def _check_objective_names(name: str, task: dict) -> None:
    """A name that tables label by itself (the control, GOLD-s, DFT, ...) must be that objective."""
    wrong = misnamed_objectives(task["objectives"])
    if wrong:
        raise ConfigError(
            f"config key tasks.{name}.objectives.{wrong[0].split(':')[0]}: {wrong[0].split(': ', 1)[1]}; give it another name "
            "(a name of your own is shown as written)"
        )


def _check_adapters(name: str, task: dict) -> None:
    """LoRA adapters are offered for decoder-only models (peft's causal-LM wrapper)."""
    if task["model"].get("lora") and not is_causal(task["model"]):
        raise ConfigError(
            f"config key tasks.{name}.model.lora: LoRA adapters train decoder-only models only (model.architecture: causal), "
            f"not {task['model']['architecture']}"
        )


def _check_split_files(name: str, source: dict) -> None:
    """A local source must not read one file for two splits: test scores would be training scores."""
    if source["kind"] != "local":
        return
    seen: dict[Path, str] = {}
    for split in SPLIT_NAMES:
        location = Path(source[split]).resolve()
        if location in seen:
            raise ConfigError(
                f"config key tasks.{name}.source.{split}: reads {source[split]}, the file of split {seen[location]} too; "
                "each split needs its own file (evaluating on training pairs is not a held-out score)"
            )
        seen[location] = split


def _check_output_lengths(config: dict, name: str, task: dict) -> None:
    generation = task["generation"]
    runs = [("generation", generation)] + [
        (f"decoders.{decoder} (with tasks.{name}.decoder_overrides)", {**generation, **decoder_view(config, name, decoder)})
        for decoder in config["decoders"]
    ]
    for where, settings in runs:
        if settings["min_new_tokens"] > settings["max_new_tokens"]:
            raise ConfigError(
                f"config key tasks.{name}.generation.min_new_tokens: {where} asks for at least {settings['min_new_tokens']} "
                f"new tokens but at most {settings['max_new_tokens']} (max_new_tokens)"
            )


def _check_kept_model(name: str, stage: str, schedule: dict) -> None:
    """keep: last is an equal fixed budget: early stopping would end some runs sooner than others."""
    if schedule["keep"] == "last" and schedule["early_stopping_patience"] is not None:
        raise ConfigError(
            f"config key tasks.{name}.{stage}.keep: last keeps the model after max_steps, an equal budget for every run, but "
            f"early_stopping_patience {schedule['early_stopping_patience']} would end runs sooner; set it to null"
        )


def _check_schedules(name: str, task: dict) -> None:
    """A warm-up longer than training never reaches the learning rate; a lagged policy re-synced less often
    than once in the run stays the starting model throughout."""
    for stage in ("mle", "fine_tune"):
        settings = task[stage]
        _check_kept_model(name, stage, settings)
        if settings["lr_scheduler"] != "constant" and settings["warmup_steps"] > settings["max_steps"]:
            raise ConfigError(
                f"config key tasks.{name}.{stage}.warmup_steps: {settings['warmup_steps']} warm-up updates exceed "
                f"max_steps ({settings['max_steps']}): the learning rate would never reach its set value"
            )
    gold = task["fine_tune"]
    if gold["sync_each_epoch"]:
        return
    for objective_name, objective in task["objectives"].items():
        lagged = "lagged_policy" in needs(objective)
        sync_every = objective.get("sync_every") or gold["sync_every"]
        if lagged and sync_every > gold["max_steps"]:
            key = "sync_every" if objective.get("sync_every") else "(fine_tune.sync_every)"
            raise ConfigError(
                f"config key tasks.{name}.objectives.{objective_name}.{key}: the lagged policy is re-synced every "
                f"{sync_every} updates, more than the run's fine_tune.max_steps ({gold['max_steps']}), so it would stay the "
                "starting model; lower sync_every, or set fine_tune.sync_each_epoch"
            )


def _check_positions(name: str, task: dict) -> None:
    """Learned positions index an embedding table: a longer sequence fails deep inside a job with
    `IndexError: index out of range in self`. Pretrained models are checked when loaded (their size is in
    their own config, not in ours)."""
    model = task["model"]
    if model["kind"] != "scratch" or is_recurrent(model):
        return
    limit = model["max_position_embeddings"]
    for what, length in sequence_lengths(task, is_causal(model)).items():
        if length > limit:
            raise ConfigError(
                f"config key tasks.{name}.model.max_position_embeddings: {limit} positions, but {what} needs {length}; "
                "raise max_position_embeddings or shorten the sequences"
            )
