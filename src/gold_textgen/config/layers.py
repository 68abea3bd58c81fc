"""The config as Snakemake merges it, layer by layer (config.yaml, each --configfile, --config): to name
the file that set a bad key, and to take a task's source whole from the layer that changes its kind."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..runtime.errors import ConfigError
from .strict_yaml import read_strict


def config_layers(base: Path, overlays: Sequence[str | Path], command_line: Mapping | None = None) -> list[tuple[str, dict]]:
    """The config as Snakemake merges it, layer by layer: the workflow's config.yaml, each --configfile in
    order, then --config values; each as (where it comes from, its settings). A key written twice in one
    file, or a number YAML would read as octal, is a ConfigError naming the file and line (strict_yaml)."""
    layers = [(str(path), read_strict(path)) for path in [base, *overlays]]
    for where, layer in layers:
        if layer is None:  # Snakemake refuses an empty --configfile too
            raise ConfigError(f"{where}: empty; a config file holds a mapping of settings (experiment:, tasks:, ...)")
        if not isinstance(layer, dict):
            raise ConfigError(f"{where}: a config file holds a mapping of settings (experiment:, tasks:, ...), not {type(layer).__name__}")
    if command_line:
        layers.append(("--config", dict(command_line)))
    return layers


def merged_config(base: Path, overlays: Sequence[str | Path] = ()) -> dict:
    """config.yaml with each overlay merged over it, as `snakemake --configfile ...` merges them (before
    validation: pass the result to schema.validate_config)."""
    return merge_layers(config_layers(base, overlays))


def merge_layers(layers: Sequence[tuple[str, dict]]) -> dict:
    """The config that `layers` make, merged as Snakemake merges them (before validation)."""
    config: dict = {}
    for _, layer in layers:
        config = _deep_merge(config, layer)
    take_switched_sources(config, layers)
    if layers:
        experiment = config.setdefault("experiment", {})
        if not isinstance(experiment, dict):
            raise ConfigError(f"config key experiment: a mapping of settings (name, tasks, seeds, ...), not {experiment!r}")
        experiment["name"] = experiment_name(layers)
    return config


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
    tasks = config.get("tasks")
    if not isinstance(tasks, dict):  # not a mapping of tasks: the schema's check names the key
        return
    for task, settings in tasks.items():
        kinds = [(index, layer_source(layer, task).get("kind")) for index, (_, layer) in enumerate(layers)]
        kinds = [(index, kind) for index, kind in kinds if kind is not None]
        switches = [index for (index, kind), (_, before) in zip(kinds[1:], kinds, strict=False) if kind != before]
        if switches and isinstance(settings, dict):
            merged: dict = {}
            for _, layer in layers[switches[-1] :]:
                merged = _deep_merge(merged, layer_source(layer, task))
            settings["source"] = merged


def layer_source(layer: dict, task: str) -> dict:
    node: object = layer
    for key in ("tasks", task, "source"):
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}


def _deep_merge(base: dict, update: dict) -> dict:
    merged = dict(base)
    for key, value in update.items():
        merged[key] = (
            _deep_merge(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) else copy.deepcopy(value)
        )
    return merged


# Layers that change settings, never the name: Snakemake's --config, gold-textgen's --set (and the file
# it passes them in, named <experiment>.<digest>.overrides.yaml).
SET_LAYER = "--set"
SETTINGS_ONLY = ("--config", SET_LAYER)
OVERRIDES_SUFFIX = ".overrides.yaml"


def _settings_only(where: str) -> bool:
    return where in SETTINGS_ONLY or where.endswith(OVERRIDES_SUFFIX)


def _layer_name(layer: dict) -> str | None:
    experiment = layer.get("experiment")
    name = experiment.get("name") if isinstance(experiment, dict) else None
    return str(name) if name else None


def experiment_name(layers: Sequence[tuple[str, dict]]) -> str:
    """The experiment's name (see name_sources)."""
    return name_sources(layers)[0]


def name_sources(layers: Sequence[tuple[str, dict]]) -> tuple[str, list[str]]:
    """(the experiment's name, the layers it comes from). The name is `experiment.name` as the last layer
    after config.yaml that sets it gives it, followed by the stem of every config file after that layer
    that sets none: configs/smoke.yaml + my_overlay.yaml is `smoke.my_overlay`, so an overlay that forgets a
    name gets a folder of its own and never retrains its base's models in place (an overlay that repeats its
    base's name changes that experiment on purpose: once its folder holds models, with --replace, as
    experiment_index says). With no name set: the stems of the config files
    (configs/my_run.yaml -> my_run); with none, config.yaml's name, `demo`. --config and --set change
    settings only. The sources are the first layer that gives the name, then those stems' files: what the
    experiment's folder belongs to (experiment_index)."""
    base, *later = layers
    named = [index for index, (where, layer) in enumerate(later) if _layer_name(layer)]
    if named:
        name = _layer_name(later[named[-1]][1])
        first = min(index for index in named if _layer_name(later[index][1]) == name)
        sources, rest = [later[first][0]], later[named[-1] + 1 :]
    else:
        name, sources, rest = None, [], later
    files = [where for where, _ in rest if not _settings_only(where)]
    if name is None and not files:
        return str(_layer_name(base[1]) or "demo"), [base[0]]
    stems = [Path(where).stem for where in files]
    return ".".join([name, *stems] if name else stems), sources + files
