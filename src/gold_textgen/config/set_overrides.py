"""`--set key=value` overrides: a dotted key path and a YAML value (`experiment.seeds=[1, 2]`,
`tasks.demo.fine_tune.learning_rate=3e-4`), merged over the config files as one more layer and checked
with the config, so a bad key or value is an error that names its path."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import yaml

from ..runtime.errors import ConfigError
from .layers import SET_LAYER, config_layers, merge_layers, where_set
from .schema import validate_config
from .strict_yaml import load_strict

KEY = re.compile(r"^[A-Za-z_][\w-]*$")


def parse_override(text: str) -> tuple[list[str], object]:
    """(key path, value) of one `key=value`; the value is read as YAML (numbers, lists, mappings, null)."""
    key, separator, value = text.partition("=")
    path = key.strip().split(".")
    if not separator or not all(KEY.match(part) for part in path):
        raise ConfigError(f"--set {text!r}: write a dotted key, '=', and a YAML value (e.g. experiment.seeds=[1,2])")
    try:  # as strictly as a config file: `[010]` is no octal 8, a mapping no duplicate key
        return path, load_strict(value, f"--set {key.strip()}") if value.strip() else None
    except yaml.YAMLError as error:
        raise ConfigError(f"--set {key}: the value {value!r} is not YAML ({error.problem})") from None


def overrides_layer(items: Sequence[str]) -> dict:
    """The nested settings the `--set` items make (later items win)."""
    layer: dict = {}
    for item in items:
        path, value = parse_override(item)
        node = layer
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {'.'.join(path)}: {part} is set to a value by another --set, not a mapping")
        node[path[-1]] = value
    return layer


def checked_config(base: Path, config_files: Sequence[Path], items: Sequence[str]) -> tuple[dict, dict]:
    """(the validated config, the override layer) for `config_files` over
    `base` with the `--set` items; a ConfigError names the key and where it was set."""
    overlays = [path for path in config_files if Path(path).resolve() != base.resolve()]
    layers = config_layers(base, overlays)
    layer = overrides_layer(items)
    layers.append((SET_LAYER, layer))  # settings only: the experiment keeps the name its files give it
    try:
        config = validate_config(merge_layers(layers))
    except ConfigError as error:
        raise ConfigError(f"{error} (set in {where_set(layers, error.key_path) or 'the schema defaults'})") from None
    return config, layer
