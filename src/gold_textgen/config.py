"""Checking an experiment config against `schemas/config.schema.yaml`, and reading it.

Snakemake calls `validate_config` when it parses the workflow, so a typo or an out-of-range value stops
the run before any job starts, with a message that names the key, e.g.
`config key tasks.demo.mle.learning_rate: -1 is less than or equal to the minimum of 0`.
Keys left out are filled with the schema's defaults, so the rest of the code sees one complete shape.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import jsonschema
import yaml
from jsonschema import Draft202012Validator, validators

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
    """The experiment config is invalid; the message names the offending key."""

    @property
    def key_path(self) -> list[str | int]:
        """The offending key as a path (`experiment.tasks[0]` -> ['experiment', 'tasks', 0]), read from the message."""
        match = re.search(r"config key ([^\s:(]+)", str(self))
        if not match:
            return []
        return [int(part) if part.isdigit() else part for part in re.split(r"\.|\[|\]", match.group(1)) if part]


def _is_integer(checker, instance) -> bool:
    """YAML's `1.0` is a float: an integer setting must be written as one (JSON Schema would accept 1.0)."""
    return isinstance(instance, int) and not isinstance(instance, bool)


def _with_defaults(validator_class):
    """A validator that fills in `default` values while it walks `properties` (jsonschema FAQ recipe)."""
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if isinstance(subschema, dict) and "default" in subschema:
                    instance.setdefault(name, _copy(subschema["default"]))
        yield from validate_properties(validator, properties, instance, schema)

    type_checker = validator_class.TYPE_CHECKER.redefine("integer", _is_integer)
    return validators.extend(validator_class, {"properties": set_defaults}, type_checker=type_checker)


def _copy(value):
    return copy.deepcopy(value)


def _key_path(error: jsonschema.ValidationError) -> str:
    parts = [str(p) for p in error.absolute_path]
    return ".".join(parts) if parts else "(top level)"


def _allowed_keys(schema: dict, root: dict) -> list[str]:
    """Property names a (sub)schema accepts, following local `$ref`s inside `allOf`."""
    names = set(schema.get("properties", {}))
    for part in schema.get("allOf", []):
        ref = part.get("$ref", "")
        target = root
        for piece in ref.removeprefix("#/").split("/") if ref.startswith("#/") else []:
            target = target[piece]
        names |= set(target.get("properties", {})) if ref else set(part.get("properties", {}))
    return sorted(names)


def _is_echo(error: jsonschema.ValidationError, root: dict) -> bool:
    """An `unevaluatedProperties` error raised only because a known key's value failed its own check."""
    if error.validator != "unevaluatedProperties" or not isinstance(error.instance, dict):
        return False
    return not set(error.instance) - set(_allowed_keys(error.schema, root))


def _describe(error: jsonschema.ValidationError, root: dict) -> str:
    # Within if/then or allOf the most specific error is the deepest one; report that.
    best = jsonschema.exceptions.best_match([error, *error.context]) if error.context else error
    if best.validator in ("additionalProperties", "unevaluatedProperties") and isinstance(best.instance, dict):
        allowed = _allowed_keys(best.schema, root)
        unknown = sorted(set(best.instance) - set(allowed))
        where = _key_path(best)
        prefix = "" if where == "(top level)" else f"{where}."
        return f"unknown config key {', '.join(prefix + u for u in unknown)} (allowed here: {', '.join(allowed)})"
    return f"config key {_key_path(best)}: {best.message}"


def load_schema(schema_path: str | Path = SCHEMA_PATH) -> dict:
    with open(schema_path, encoding="utf-8") as handle:
        # libyaml's loader when present: the schema is parsed at every Snakemake start (dry runs included)
        return yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def validate_config(config: dict, schema_path: str | Path = SCHEMA_PATH) -> dict:
    """Validate `config` in place (filling defaults) and check cross-references; return it."""
    schema = load_schema(schema_path)
    validator = _with_defaults(Draft202012Validator)(schema)
    errors = [e for e in validator.iter_errors(config) if not _is_echo(e, schema)]
    if errors:
        # Report the most specific problem: the one deepest in the config.
        deepest = max(errors, key=lambda e: (len(e.absolute_path), -len(str(e.message))))
        raise ConfigError(_describe(deepest, schema))
    _check_finite(config, [])
    _check_references(config)
    return config


def _check_finite(node, path: list[str]) -> None:
    """JSON Schema's number ranges let NaN and infinity through (every comparison with NaN is false)."""
    if isinstance(node, dict):
        for key, value in node.items():
            _check_finite(value, [*path, str(key)])
    elif isinstance(node, list):
        for index, value in enumerate(node):
            _check_finite(value, [*path[:-1], f"{path[-1]}[{index}]"] if path else [f"[{index}]"])
    elif isinstance(node, float) and not math.isfinite(node):
        raise ConfigError(f"config key {'.'.join(path)}: {node} is not a finite number")


def _check_references(config: dict) -> None:
    experiment = config["experiment"]
    for index, task in enumerate(experiment["tasks"]):
        if task not in config["tasks"]:
            raise ConfigError(
                f"config key experiment.tasks[{index}]: task '{task}' is not defined under tasks "
                f"(defined: {', '.join(sorted(config['tasks']))})"
            )
    for key in ("decoders", "sweep_decoders"):
        for index, decoder in enumerate(experiment[key]):
            _check_decoder_name(config, f"experiment.{key}[{index}]", decoder)
    _check_decoder_name(config, "analysis.decoder", config["analysis"]["decoder"])
    for name, decoder in config["decoders"].items():
        sampling_keys = sorted(k for k in ("top_k", "top_p", "temperature") if k in decoder)
        if not decoder["do_sample"] and (sampling_keys or decoder["samples"] > 1):
            offending = sampling_keys[0] if sampling_keys else "samples"
            raise ConfigError(f"config key decoders.{name}.{offending}: applies to sampling only; set do_sample: true")
    seed = config["analysis"]["seed"]
    if seed is not None and seed not in experiment["seeds"]:
        raise ConfigError(f"config key analysis.seed: {seed} is not one of experiment.seeds {experiment['seeds']}")
    gold_objective = config["analysis"]["gold_objective"]
    if gold_objective is not None and (gold_objective == "mle" or gold_objective not in experiment["objectives"]):
        gold = [o for o in experiment["objectives"] if o != "mle"]
        raise ConfigError(f"config key analysis.gold_objective: '{gold_objective}' is not a GOLD objective of experiment.objectives {gold}")
    for name in experiment["tasks"]:
        for index, objective in enumerate(experiment["objectives"]):
            if objective != "mle" and objective not in config["tasks"][name]["objectives"]:
                raise ConfigError(
                    f"config key experiment.objectives[{index}]: objective '{objective}' is not defined under "
                    f"tasks.{name}.objectives (defined: {', '.join(sorted(config['tasks'][name]['objectives'])) or 'none'})"
                )
    for name, task in config["tasks"].items():
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
        if source["kind"] == "synthetic" and abs(sum(source["synonym_probs"]) - 1) > 1e-6:
            raise ConfigError(f"config key tasks.{name}.source.synonym_probs: must sum to 1")
        for stage in ("mle", "gold"):
            settings = task[stage]
            if settings["tokens_per_update"] is not None and settings["max_tokens"] is None:
                raise ConfigError(f"config key tasks.{name}.{stage}.tokens_per_update: needs max_tokens (the per-device budget it divides)")
            if settings["tokens_per_update"] is not None and settings["gradient_accumulation_steps"] != 1:
                raise ConfigError(
                    f"config key tasks.{name}.{stage}.gradient_accumulation_steps: leave it at 1 with tokens_per_update, which works it out"
                )
        if task["model"]["kind"] == "scratch" and task["model"]["d_model"] % task["model"]["attention_heads"]:
            raise ConfigError(f"config key tasks.{name}.model.attention_heads: must divide d_model")


def config_layers(base: Path, overlays: Sequence[str | Path], command_line: Mapping | None = None) -> list[tuple[str, dict]]:
    """The config as Snakemake merges it, layer by layer: the workflow's config.yaml, each --configfile in
    order, then --config values; each as (where it comes from, its settings)."""
    layers = [(str(path), yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}) for path in [base, *overlays]]
    if command_line:
        layers.append(("--config", dict(command_line)))
    return layers


def where_set(layers: Sequence[tuple[str, dict]], key_path: Sequence[str | int]) -> str | None:
    """The last layer that sets `key_path`, or else the longest part of it (None: only schema defaults)."""
    for length in range(len(key_path), 0, -1):
        for name, layer in reversed(layers):
            if _lookup(layer, key_path[:length]):
                return name
    return None


def _lookup(node, path: Sequence[str | int]) -> bool:
    for part in path:
        if (isinstance(node, dict) and part in node) or (isinstance(node, list) and isinstance(part, int) and part < len(node)):
            node = node[part]
        else:
            return False
    return True


def take_switched_sources(config: dict, layers: Sequence[tuple[str, dict]]) -> None:
    """Overlays merge key by key, except a task's `source` whose `kind` a later layer changes: from that
    layer on, the source block is taken whole (merged over the later layers only), so keys of one source
    kind (a synthetic task's `num_train`) never leak into another (a `local` source)."""
    for task, settings in config.get("tasks", {}).items():
        kinds = [(index, layer_source(layer, task).get("kind")) for index, (_, layer) in enumerate(layers)]
        kinds = [(index, kind) for index, kind in kinds if kind is not None]
        switches = [index for (index, kind), (_, before) in zip(kinds[1:], kinds, strict=False) if kind != before]
        if switches and isinstance(settings, dict):
            merged: dict = {}
            for _, layer in layers[switches[-1] :]:
                merged = _deep_merge(merged, layer_source(layer, task))
            settings["source"] = merged


def layer_source(layer: dict, task: str) -> dict:
    source = ((layer.get("tasks") or {}).get(task) or {}).get("source")
    return source if isinstance(source, dict) else {}


def _deep_merge(base: dict, update: dict) -> dict:
    merged = dict(base)
    for key, value in update.items():
        merged[key] = (
            _deep_merge(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) else copy.deepcopy(value)
        )
    return merged


def _check_decoder_name(config: dict, key: str, decoder: str) -> None:
    if decoder not in config["decoders"]:
        raise ConfigError(f"config key {key}: {_undefined_decoder(config, decoder)}")


def _undefined_decoder(config: dict, decoder: str) -> str:
    return f"decoder '{decoder}' is not defined under decoders (defined: {', '.join(sorted(config['decoders']))})"


def check_target(config: dict, wildcards: Mapping[str, str]) -> None:
    """A requested output may only name what the config defines: a task, an objective of that task, a
    seed of `experiment.seeds`, a decoder and one of its sampling runs. Anything else (a typo such as
    `gold_zz`, `seed99`, `sample9` of a decoder with three runs) is an error saying what exists."""
    task = wildcards.get("task")
    if task is not None and task not in config["tasks"]:
        raise ConfigError(f"task '{task}' is not defined under tasks (defined: {', '.join(sorted(config['tasks']))})")
    objective = wildcards.get("objective")
    if objective is not None and objective != "mle" and objective not in config["tasks"][task]["objectives"]:
        defined = ", ".join(["mle", *sorted(config["tasks"][task]["objectives"])])
        raise ConfigError(f"objective '{objective}' is not defined for task {task} (defined: {defined})")
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


def sample_ids(decoder: dict) -> list[int]:
    """The runs of one decoder: sample seeds 1..samples for a sampling decoder, the single run 0 otherwise."""
    return list(range(1, decoder["samples"] + 1)) if decoder["do_sample"] else [0]


def analysis_settings(config: dict) -> dict:
    """The `analysis` section with its defaults resolved: the seed (first training seed) and the GOLD
    objective compared with MLE (the last GOLD objective of the experiment, or None if it has none)."""
    analysis = dict(config["analysis"])
    experiment = config["experiment"]
    if analysis["seed"] is None:
        analysis["seed"] = experiment["seeds"][0]
    if analysis["gold_objective"] is None:
        gold = [o for o in experiment["objectives"] if o != "mle"]
        analysis["gold_objective"] = gold[-1] if gold else None
    return analysis


def task_config(config: dict, task: str) -> dict:
    """The settings of one task, with its name and `dev_search`, the resolved search of its `dev_decoder`
    (see dev_search); raises a ConfigError naming an unknown task."""
    if task not in config["tasks"]:
        raise ConfigError(f"unknown task '{task}' (defined: {', '.join(sorted(config['tasks']))})")
    settings = {"name": task, **config["tasks"][task]}
    settings["dev_search"] = dev_search(config, task)
    return settings


def dev_search(config: dict, task: str) -> dict:
    """How dev outputs are decoded while training selects checkpoints: the task's `dev_decoder` with its
    overrides, and the length penalty where a beam reads it. Part of the training view, so changing it
    retrains, while the decoders of the sweep stay decoding-only settings."""
    search = {key: value for key, value in decoder_view(config, task, config["tasks"][task]["dev_decoder"]).items() if key != "do_sample"}
    if search.get("num_beams", 1) > 1:
        search["length_penalty"] = config["tasks"][task]["generation"]["length_penalty"]
    return search


def uses_trained_tokenizer(task: dict) -> bool:
    """Models built from scratch need a tokenizer trained on the task's data; pretrained ones bring theirs."""
    return task["model"]["kind"] == "scratch"


DECODING_ONLY = ("length_penalty", "batch_size")
# Task keys that only decoding and reporting read: changing them must not retrain anything.
NOT_TRAINING = ("decoder_overrides", "baselines", "paper_results", "perplexity_units")


def training_view(task: dict, objective: str) -> dict:
    """The task settings that can change the model trained with `objective`.

    Decoding-only settings (beam length penalty, decoding batch size, per-task decoder overrides) and the
    reporting keys (baselines, the paper's numbers) are left out, so changing them
    reruns decoding but never training; MLE ignores the GOLD settings, and a GOLD objective sees only
    its own entry of `objectives` (its MLE starting point is an input file, tracked by Snakemake).
    """
    view = {key: value for key, value in task.items() if key not in ("generation", "mle", "gold", "objectives", *NOT_TRAINING)}
    view["generation"] = {k: v for k, v in task["generation"].items() if k not in DECODING_ONLY}
    if objective == "mle":
        view["mle"] = task["mle"]
    else:
        if objective not in task.get("objectives", {}):
            raise ConfigError(f"objective '{objective}' is not defined under tasks.{task.get('name', '?')}.objectives")
        view["gold"] = task["gold"]
        view["objectives"] = {objective: task["objectives"][objective]}
    return view


def decoder_view(config: dict, task: str, decoder: str) -> dict:
    """A decoder's search settings for one task: the shared entry under `decoders`, updated with the task's
    `decoder_overrides` for that name (the paper decodes each task with its own beam size)."""
    settings = {key: value for key, value in config["decoders"][decoder].items() if key != "samples"}
    settings.update(config["tasks"][task]["decoder_overrides"].get(decoder, {}))
    return settings


def decoding_view(task: dict) -> dict:
    """The task settings that decoding reads: lengths and generation."""
    return {key: task[key] for key in ("name", "max_source_length", "max_target_length", "generation")}


def teacher_forcing_view(task: dict) -> dict:
    """The task settings that teacher-forced passes (token NLL, reward cache) read: lengths and batch size,
    so changing a search setting such as the length penalty leaves them alone."""
    return {
        **{key: task[key] for key in ("name", "max_source_length", "max_target_length")},
        "generation": {"batch_size": task["generation"]["batch_size"]},
    }


DOWNLOADED_KINDS = ("nqg_zhou2017", "iwslt14_fairseq")


def needs_download(source: dict) -> bool:
    """Sources read from an archive that the workflow downloads first (rule download_source)."""
    return source["kind"] in DOWNLOADED_KINDS


def reads_hub(source: dict) -> bool:
    """Sources that `prepare_dataset` reads from the dataset hub (it needs the internet, or the cache)."""
    return source["kind"] == "huggingface"


def model_label(task: dict) -> str:
    """A short description of a task's model, for tables: the checkpoint name, or the from-scratch shape."""
    model = task["model"]
    if model["kind"] == "pretrained":
        return str(model["name_or_path"])
    return (
        f"{model['architecture']} {model['encoder_layers']}+{model['decoder_layers']} layers, d {model['d_model']}, "
        f"{model['attention_heads']} heads, FFN {model['ffn_dim']} (from scratch)"
    )


def model_family(task: dict) -> str:
    """The model family of a task, as the paper's tables group them: every architecture this project
    builds or loads today is a transformer (the paper's Tables 1 and 2 use recurrent models)."""
    return "transformer"


def local_source_files(source: dict) -> list[str]:
    """The files a `local` source reads (empty for the synthetic task)."""
    if source["kind"] != "local":
        return []
    if source["format"] != "parallel":
        return [source[split] for split in ("train", "valid", "test")]
    suffixes = source["suffixes"]
    return [f"{source[split]}{suffix}" for split in ("train", "valid", "test") for suffix in suffixes]


def canonical(value):
    """`value` with every mapping's keys sorted, recursively.

    Snakemake compares a job's params with the last run by their text, so the same settings written in
    another key order (a config file saved by another tool, say) would otherwise rerun the job.
    """
    if isinstance(value, dict):
        return {key: canonical(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [canonical(item) for item in value]
    return value
