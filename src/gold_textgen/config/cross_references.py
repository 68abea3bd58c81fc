"""Checks the schema cannot express: names that must refer to something defined elsewhere in the config
(a task of the experiment, a decoder, an objective of every task, the analysed seed) and the relations
between settings (min_length <= max_length, tokens_per_update with max_tokens). `check_target` applies
the same rules to an output a user asks for on the command line."""

from __future__ import annotations

from collections.abc import Mapping

from ..catalog import DEFAULT_LOSS, LOSSES, foreign_settings, readers
from ..catalog.builtin_objectives import CONTROL
from ..runtime.errors import ConfigError
from .setting_relations import check_setting_relations
from .training_loggers import logger_problem
from .views import RECURRENT_ARCHITECTURES, evaluated_objectives, is_recurrent, sample_ids, task_objectives


def check_objective_keys(config: dict) -> None:
    """Every setting the user wrote under an objective applies to its loss (the catalog's row; a setting of
    another loss would be silently ignored). Call it on the config as written (before the schema fills in
    defaults); keys of the wrong type or unknown everywhere are left to the schema."""
    tasks = config.get("tasks")
    for task_name, task in tasks.items() if isinstance(tasks, dict) else ():
        objectives = task.get("objectives") if isinstance(task, dict) else None
        for name, settings in objectives.items() if isinstance(objectives, dict) else ():
            if not isinstance(settings, dict):
                continue
            for key in foreign_settings(settings):
                row = LOSSES[settings.get("loss", DEFAULT_LOSS)]
                raise ConfigError(
                    f"config key tasks.{task_name}.objectives.{name}.{key}: does not apply to loss {row.name} "
                    f"(it is a setting of {', '.join(readers(key))}; loss {row.name} reads {', '.join(row.settings) or 'none of them'})"
                )


def check_references(config: dict) -> None:
    problem = logger_problem(config["training_logger"])
    if problem:
        raise ConfigError(f"config key training_logger: {problem}")
    _check_experiment(config)
    _check_analysis(config)
    _check_cost(config)
    for name in config["experiment"]["tasks"]:
        _check_starting_points(config, name)
        _check_run_objectives(config, name)
        _check_imported_models(config, name)
    for name, task in config["tasks"].items():
        _check_task(config, name, task)
    check_setting_relations(config)


def _check_experiment(config: dict) -> None:
    """experiment: its tasks, decoders and per-task objectives name what the config defines."""
    experiment = config["experiment"]
    if experiment["extends"] and experiment["extends"] == experiment["name"]:
        raise ConfigError(
            f"config key experiment.extends: '{experiment['name']}' is this experiment's own name; name the experiment it adds to"
        )
    for index, task in enumerate(experiment["tasks"]):
        if task not in config["tasks"]:
            raise ConfigError(
                f"config key experiment.tasks[{index}]: task '{task}' is not defined under tasks "
                f"(defined: {', '.join(sorted(config['tasks']))})"
            )
    for key in ("decoders", "sweep_decoders"):
        for index, decoder in enumerate(experiment[key]):
            _check_decoder_name(config, f"experiment.{key}[{index}]", decoder)
    for name, decoder in config["decoders"].items():
        sampling_keys = sorted(k for k in ("top_k", "top_p", "temperature") if k in decoder)
        if not decoder["do_sample"] and (sampling_keys or decoder["samples"] > 1):
            offending = sampling_keys[0] if sampling_keys else "samples"
            raise ConfigError(f"config key decoders.{name}.{offending}: applies to sampling only; set do_sample: true")
    for task in experiment["task_objectives"]:  # a task outside experiment.tasks is not run: its entry is unused
        if task not in config["tasks"]:
            raise ConfigError(f"config key experiment.task_objectives.{task}: '{task}' is not defined under tasks")


def _check_analysis(config: dict) -> None:
    """analysis: its decoder, seed and GOLD objective are among the experiment's."""
    experiment = config["experiment"]
    _check_decoder_name(config, "analysis.decoder", config["analysis"]["decoder"])
    seed = config["analysis"]["seed"]
    if seed is not None and seed not in experiment["seeds"]:
        raise ConfigError(f"config key analysis.seed: {seed} is not one of experiment.seeds {experiment['seeds']}")
    gold_objective = config["analysis"]["gold_objective"]
    if gold_objective is not None and (gold_objective == "mle" or gold_objective not in experiment["objectives"]):
        gold = [o for o in experiment["objectives"] if o != "mle"]
        raise ConfigError(f"config key analysis.gold_objective: '{gold_objective}' is not a GOLD objective of experiment.objectives {gold}")


def _check_cost(config: dict) -> None:
    """cost: the expected figures name tasks and objectives that exist."""
    for key in ("expected_updates", "expected_examples"):  # a typo would plan that task by another figure, silently
        for task in config["cost"][key]:
            if task not in config["tasks"]:
                raise ConfigError(f"config key cost.{key}.{task}: '{task}' is not defined under tasks")
    for task, counts in config["cost"]["expected_updates"].items():
        objectives = ["mle", *config["tasks"][task]["objectives"]]
        for objective in counts:
            if objective not in objectives:
                known = ", ".join(objectives)
                raise ConfigError(f"config key cost.expected_updates.{task}.{objective}: not an objective of the task ({known})")


def _check_run_objectives(config: dict, name: str) -> None:
    """The objectives the experiment runs on task `name` are defined by the task or imported by it."""
    experiment, task = config["experiment"], config["tasks"][name]
    for key, objectives in (
        ("objectives", experiment["objectives"]),
        (f"task_objectives.{name}", experiment["task_objectives"].get(name, [])),
    ):
        for index, objective in enumerate(objectives):
            if objective != "mle" and objective not in task["objectives"] and objective not in task["imported_models"]:
                raise ConfigError(
                    f"config key experiment.{key}[{index}]: objective '{objective}' is not defined under "
                    f"tasks.{name}.objectives (defined: {', '.join(sorted(task['objectives'])) or 'none'}) "
                    f"nor imported by tasks.{name}.imported_models"
                )


def _check_task(config: dict, name: str, task: dict) -> None:
    """One task's settings that depend on each other or on the config's decoders."""
    for decoder in task["decoder_overrides"]:
        _check_decoder_name(config, f"tasks.{name}.decoder_overrides.{decoder}", decoder)
    _check_decoder_name(config, f"tasks.{name}.dev_decoder", task["dev_decoder"])
    if config["decoders"][task["dev_decoder"]]["do_sample"]:
        raise ConfigError(
            f"config key tasks.{name}.dev_decoder: '{task['dev_decoder']}' samples; checkpoint selection needs a deterministic decoder"
        )
    source = task["source"]
    if source["kind"] == "synthetic" and source["min_length"] > source["max_length"]:
        raise ConfigError(f"config key tasks.{name}.source.min_length: must not exceed max_length")
    for key in ("synonym_probs", "class_shares", "chunk_probs"):
        if source["kind"] == "synthetic" and abs(sum(source[key]) - 1) > 1e-6:
            raise ConfigError(f"config key tasks.{name}.source.{key}: must sum to 1")
    for stage in ("mle", "fine_tune"):
        settings = task[stage]
        if settings["tokens_per_update"] is not None and settings["max_tokens"] is None:
            raise ConfigError(f"config key tasks.{name}.{stage}.tokens_per_update: needs max_tokens (the per-device budget it divides)")
        if settings["tokens_per_update"] is not None and settings["gradient_accumulation_steps"] != 1:
            raise ConfigError(
                f"config key tasks.{name}.{stage}.gradient_accumulation_steps: leave it at 1 with tokens_per_update, which works it out"
            )
    _check_sentence_split(name, source)
    _check_vocabulary(name, task)
    if task["model"]["kind"] == "scratch" and task["model"]["d_model"] % task["model"]["attention_heads"]:
        raise ConfigError(f"config key tasks.{name}.model.attention_heads: must divide d_model")
    _check_recurrent_model(name, task)


def _check_recurrent_model(name: str, task: dict) -> None:
    """The copy models read one token per word with placeholders for the source's unknown words; token
    features are NQG++'s only, and need a source that has them; on-policy sampling (texts restored from
    placeholders) is not wired for them."""
    model = task["model"]
    if model["features"]:
        if model.get("architecture") != "nqg_pp" or model["kind"] != "scratch":
            raise ConfigError(f"config key tasks.{name}.model.features: only the nqg_pp model reads token features")
        problem = _feature_source_problem(task["source"])
        if problem:
            raise ConfigError(f"config key tasks.{name}.model.features: {problem}")
    if not is_recurrent(model):
        if task["tokenizer"]["copy_slots"]:
            raise ConfigError(
                f"config key tasks.{name}.tokenizer.copy_slots: only the copy models ({', '.join(RECURRENT_ARCHITECTURES)}) read copy "
                "placeholders; leave it at 0"
            )
        return
    tokenizer = task["tokenizer"]
    if tokenizer["kind"] != "wordlevel":
        raise ConfigError(f"config key tasks.{name}.tokenizer.kind: the {model['architecture']} model reads words (wordlevel)")
    if model["copy"] and tokenizer["copy_slots"] < 1:
        raise ConfigError(
            f"config key tasks.{name}.tokenizer.copy_slots: the {model['architecture']} model copies over the source-extended "
            f"vocabulary, which needs copy_slots >= 1 (max_source_length, {task['max_source_length']}, covers every source word)"
        )
    if not model["copy"] and tokenizer["copy_slots"]:
        raise ConfigError(
            f"config key tasks.{name}.tokenizer.copy_slots: must be 0 with model.copy false (a model that cannot copy "
            "cannot produce the placeholders its references would hold)"
        )
    if model["encoder_hidden"] % 2:
        raise ConfigError(f"config key tasks.{name}.model.encoder_hidden: must be even (two directions of half of it)")


def _check_sentence_split(name: str, source: dict) -> None:
    """`sentence_split` divides one file among the three splits, so they must read the same file and no
    line range may cut it otherwise."""
    if source["kind"] != "nqg_zhou2017" or not source["sentence_split"]:
        return
    if source["line_ranges"]:
        raise ConfigError(f"config key tasks.{name}.source.line_ranges: set it or sentence_split, not both")
    prefixes = {split: source["prefixes"][split] for split in ("train", "valid", "test")}
    if len(set(prefixes.values())) != 1:
        raise ConfigError(
            f"config key tasks.{name}.source.prefixes: sentence_split divides one file among the splits, but they read "
            f"{', '.join(f'{split} {prefix}' for split, prefix in prefixes.items())}"
        )


SPECIAL_TOKENS = 4  # <s>, <pad>, </s>, <unk> (data/tokenization.py), inside vocab_size
MIN_WORDS = 32


def _check_vocabulary(name: str, task: dict) -> None:
    """A vocabulary of a handful of words turns nearly every reference token into `<unk>`, which a model
    predicts easily: a perplexity near 1 over outputs that are empty. Refused before anything trains."""
    if task["model"]["kind"] != "scratch":
        return
    size = task["tokenizer"]["vocab_size"]
    if size < SPECIAL_TOKENS + MIN_WORDS:
        raise ConfigError(
            f"config key tasks.{name}.tokenizer.vocab_size: {size} leaves {max(0, size - SPECIAL_TOKENS)} entries for words after the "
            f"{SPECIAL_TOKENS} special tokens; at least {MIN_WORDS} are needed ({SPECIAL_TOKENS + MIN_WORDS} in all), or nearly every "
            "reference token would be <unk>"
        )


def _feature_source_problem(source: dict) -> str | None:
    """Why a source gives its records no token features (None: it does, or may: a JSONL file's extra
    fields are kept, `token_features` among them)."""
    if source["kind"] == "nqg_zhou2017":
        return None if source["token_features"] else "the source keeps no token features; set source.token_features: true"
    if source["kind"] == "local" and source.get("format") == "jsonl":
        return None
    return f"a {source['kind']} source{' in ' + source['format'] + ' format' if source['kind'] == 'local' else ''} has no token features"


def _check_decoder_name(config: dict, key: str, decoder: str) -> None:
    if decoder not in config["decoders"]:
        raise ConfigError(f"config key {key}: {_undefined_decoder(config, decoder)}")


def _undefined_decoder(config: dict, decoder: str) -> str:
    return f"decoder '{decoder}' is not defined under decoders (defined: {', '.join(sorted(config['decoders']))})"


def check_target(config: dict, wildcards: Mapping[str, str]) -> None:
    """A requested output may only name what the config defines: a task, an objective of that task (or a
    model it imports), a seed of `experiment.seeds`, a decoder and one of its sampling runs. Anything else (a typo such as
    `gold_zz`, `seed99`, `sample9` of a decoder with three runs) is an error saying what exists."""
    task = wildcards.get("task")
    if task is not None and task not in config["tasks"]:
        raise ConfigError(f"task '{task}' is not defined under tasks (defined: {', '.join(sorted(config['tasks']))})")
    objective = wildcards.get("objective")
    if (
        objective is not None
        and objective != "mle"
        and objective not in {**config["tasks"][task]["objectives"], **config["tasks"][task]["imported_models"]}
    ):
        defined = ", ".join(["mle", *sorted(config["tasks"][task]["objectives"])])
        imported = ", ".join(config["tasks"][task]["imported_models"])
        raise ConfigError(
            f"objective '{objective}' is not defined for task {task} (defined: {defined}{'; imported: ' + imported if imported else ''})"
        )
    seed = wildcards.get("seed")
    if seed is not None and int(seed) not in config["experiment"]["seeds"]:
        raise ConfigError(f"seed {seed} is not one of experiment.seeds {config['experiment']['seeds']} (add it there to train it)")
    decoder = wildcards.get("decoder")
    if decoder is not None:
        if decoder not in config["decoders"]:
            raise ConfigError(_undefined_decoder(config, decoder))
        sample = wildcards.get("sample")
        runs = sample_ids(config["decoders"][decoder])
        if sample is not None and int(sample) not in runs:
            what = f"runs sample{runs[0]}..sample{runs[-1]}" if len(runs) > 1 else f"runs once, as sample{runs[0]}"
            raise ConfigError(f"decoder '{decoder}' {what}; sample{sample} is not one of them")


def _check_imported_models(config: dict, task: str) -> None:
    """A task evaluates something; an imported model is never trained nor trained from (its architecture,
    tokenizer and training are its own), and a name imported in one task is not trained in another (one rule
    makes each model folder)."""
    imported = config["tasks"][task]["imported_models"]
    if not evaluated_objectives(config, task):
        raise ConfigError(
            f"config key experiment.objectives: empty, and tasks.{task}.imported_models imports nothing: no model to evaluate"
        )
    trained = task_objectives(config, task)
    for objective in trained:
        start = config["tasks"][task]["objectives"].get(objective, {}).get("start_from")
        if start in imported:
            raise ConfigError(
                f"config key tasks.{task}.objectives.{objective}.start_from: '{start}' is imported "
                f"(tasks.{task}.imported_models.{start}); imported models are evaluated, not fine-tuned from"
            )
    single = [name for name, entry in imported.items() if "{seed}" not in entry["path"]]
    baselines = [name for name in single if name in ("mle", CONTROL)]
    if len(config["experiment"]["seeds"]) > 1 and baselines and len(single) > 1:
        other = next(name for name in single if name != baselines[0])
        raise ConfigError(
            f"config key tasks.{task}.imported_models.{other}.path: one checkpoint for every seed, compared with "
            f"{baselines[0]}, one checkpoint too: the seeds would repeat the same comparison as if independent. "
            "Put `{seed}` in the paths (one checkpoint per seed) or set experiment.seeds to one seed"
        )
    for other in config["experiment"]["tasks"]:
        both = sorted((set(imported) - {"mle"}) & set(task_objectives(config, other)))
        if both:
            raise ConfigError(
                f"config key tasks.{task}.imported_models.{both[0]}: trained in task '{other}' under the same name; "
                "give the imported model a name of its own"
            )


def _check_starting_points(config: dict, task: str) -> None:
    """Each objective of the experiment starts from `mle` or from another objective of the experiment,
    and following `start_from` always ends at `mle` (no objective starts from itself, directly or not)."""
    objectives = config["tasks"][task]["objectives"]
    run = task_objectives(config, task)
    for objective in run:
        chain, current = [objective], objective
        while current != "mle" and current in objectives:
            current = objectives[current]["start_from"]
            if current != "mle" and current not in run:
                raise ConfigError(
                    f"config key tasks.{task}.objectives.{chain[-1]}.start_from: '{current}' is not an objective of "
                    f"the task's objectives {run} (a model must be trained before another starts from it)"
                )
            if current in chain:
                raise ConfigError(f"config key tasks.{task}.objectives.{objective}.start_from: a cycle {' -> '.join([*chain, current])}")
            chain.append(current)
