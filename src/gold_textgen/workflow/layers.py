"""The config as Snakemake merges it, layer by layer (config.yaml, each --configfile, --config): to name
the file that set a bad key, and to take a task's source whole from the layer that changes its kind."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path

from .strict_yaml import read_strict


def config_layers(base: Path, overlays: Sequence[str | Path], command_line: Mapping | None = None) -> list[tuple[str, dict]]:
    """The config as Snakemake merges it, layer by layer: the workflow's config.yaml, each --configfile in
    order, then --config values; each as (where it comes from, its settings). A key written twice in one
    file, or a number YAML would read as octal, is a ConfigError naming the file and line (strict_yaml)."""
    layers = [(str(path), read_strict(path) or {}) for path in [base, *overlays]]
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
        config.setdefault("experiment", {})["name"] = experiment_name(layers)
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


def experiment_name(layers: Sequence[tuple[str, dict]]) -> str:
    """The experiment's name: `experiment.name` as the last layer after config.yaml sets it; else the stem of
    the last --configfile (configs/my_run.yaml -> my_run), so a config that forgets its name never writes
    into another experiment's folder; else (config.yaml alone) the name config.yaml gives, `demo`."""
    base, *later = layers
    for _, layer in reversed(later):
        name = (layer.get("experiment") or {}).get("name") if isinstance(layer.get("experiment"), dict) else None
        if name:
            return str(name)
    files = [where for where, _ in later if where != "--config"]
    if files:
        return Path(files[-1]).stem
    return str((base[1].get("experiment") or {}).get("name") or "demo")
