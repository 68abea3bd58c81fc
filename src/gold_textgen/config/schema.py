"""Checking an experiment config against the schema (`config.schema.yaml`, shipped in this package).

Snakemake calls `validate_config` when it parses the workflow, so a typo or an out-of-range value stops
the run before any job starts, with a message that names the key, e.g.
`config key tasks.demo.mle.learning_rate: -1 is less than or equal to the minimum of 0`.
Keys left out are filled with the schema's defaults, so the rest of the code sees one complete shape: the
schema is the only owner of defaults and ranges; the settings dataclasses are typed views of its output.
"""

from __future__ import annotations

import copy
import math
import warnings
from importlib.resources import files
from pathlib import Path

import jsonschema
import yaml
from jsonschema import Draft202012Validator, validators

from ..catalog.builtin_objectives import add_builtin_objectives
from ..runtime.errors import ConfigError
from .cross_references import check_objective_keys, check_references
from .objective_schema import objective_schema

SCHEMA_FILE = "config.schema.yaml"


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
    if best.validator == "not" and isinstance(best.validator_value, dict) and "description" in best.validator_value:
        return f"config key {_key_path(best)}: {best.instance!r}: {best.validator_value['description']}"
    if best.validator == "maxLength":
        return f"config key {_key_path(best)}: {len(best.instance)} characters, at most {best.validator_value} allowed"
    return f"config key {_key_path(best)}: {best.message}{_number_hint(best)}"


def _number_hint(error: jsonschema.ValidationError) -> str:
    """YAML 1.1 reads `1e-3` (no dot before the exponent) as text: say how to write it as a number."""
    if error.validator != "type" or not isinstance(error.instance, str):
        return ""
    try:
        value = float(error.instance)
    except ValueError:
        return ""
    mantissa, _, exponent = error.instance.lower().partition("e")
    written = f"{mantissa if '.' in mantissa else mantissa + '.0'}e{exponent}" if exponent else repr(value)
    return f" (YAML reads {error.instance!r} as text; write {written} for the number)"


def load_schema(schema_path: str | Path | None = None) -> dict:
    with (files(__package__) / SCHEMA_FILE if schema_path is None else Path(schema_path)).open(encoding="utf-8") as handle:
        # libyaml's loader when present: the schema is parsed at every Snakemake start (dry runs included)
        schema = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    schema["$defs"]["objective"] = objective_schema()  # one row per loss in the catalog
    return schema


def validate_config(config: dict, schema_path: str | Path | None = None) -> dict:
    """Validate `config` in place (adding the built-in objectives, filling defaults) and check
    cross-references; return it."""
    schema = load_schema(schema_path)
    rename_deprecated_keys(config)
    add_builtin_objectives(config)
    as_written = copy.deepcopy(config)  # the keys the user set, before the defaults are filled in
    validator = _with_defaults(Draft202012Validator)(schema)
    errors = [e for e in validator.iter_errors(config) if not _is_echo(e, schema)]
    if errors:
        # Report the most specific problem: the one deepest in the config.
        deepest = max(errors, key=lambda e: (len(e.absolute_path), -len(str(e.message))))
        raise ConfigError(_describe(deepest, schema))
    check_objective_keys(as_written)
    _check_finite(config, [])
    check_references(config)
    return config


# Task keys renamed since: old name -> new name (the old one is read, with a warning).
RENAMED_TASK_KEYS = {"gold": "fine_tune"}


def rename_deprecated_keys(config: dict) -> None:
    """Read a task's old key names (`gold:`, the fine-tuning block of every objective, now `fine_tune:`)
    under their new names, in place, with a FutureWarning that names the key. Where both are set (an old
    overlay over a new config.yaml) the old block's values are merged over the new one's, as the overlay
    meant."""
    tasks = config.get("tasks")
    for name, task in tasks.items() if isinstance(tasks, dict) else ():
        if not isinstance(task, dict):
            continue
        for old, new in RENAMED_TASK_KEYS.items():
            if old in task:
                warnings.warn(f"config key tasks.{name}.{old}: renamed to tasks.{name}.{new}; read as {new}", FutureWarning, stacklevel=3)
                value = task.pop(old)
                task[new] = {**task[new], **value} if isinstance(task.get(new), dict) and isinstance(value, dict) else value


def defaults(definition: str, **values) -> dict:
    """`values` completed with the schema's defaults for one of its definitions (`$defs`), checked like a
    config: e.g. defaults("synthetic_source", kind="synthetic", num_train=64) is a complete demo-task
    source, defaults("objective", reward="s") a complete GOLD objective."""
    schema = load_schema()
    validator = _with_defaults(Draft202012Validator)({"$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]})
    completed = copy.deepcopy(values)
    errors = [e for e in validator.iter_errors(completed) if not _is_echo(e, schema)]
    if errors:
        raise ConfigError(f"{definition}: {_describe(errors[0], schema)}")
    return completed


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
