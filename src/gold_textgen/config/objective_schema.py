"""The config schema's definition of one objective, built from the loss catalog (catalog/):
`load_schema` puts it in place of the placeholder in config.schema.yaml, so the schema cannot disagree
with the rows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..catalog import COMMON_SETTINGS, DEFAULT_LOSS, LOSSES, REQUIRED, Setting, readers


def objective_schema() -> dict:
    """The JSON Schema of one entry of a task's `objectives`, built from the rows: every setting once (its
    description prefixed by the losses that read it), then per loss its required settings and defaults."""
    properties: dict[str, dict] = {
        "loss": {
            "description": "; ".join(row.summary for row in LOSSES.values()) + ". References: src/gold_textgen/objectives/.",
            "enum": list(LOSSES),
            "default": DEFAULT_LOSS,
        }
    }
    for name, setting in COMMON_SETTINGS.items():
        properties[name] = {**setting.schema, "description": setting.description}
        if setting.default is not REQUIRED:
            properties[name]["default"] = setting.default
    shared: dict[str, Mapping[str, Any]] = {}
    for row in LOSSES.values():
        for name, setting in row.settings.items():
            if name in shared and shared[name] != setting.schema:
                raise ValueError(f"setting '{name}' has different types in the rows of {', '.join(readers(name))}")
            shared[name] = setting.schema
            entry = properties.setdefault(name, {**setting.schema, "description": ""})
            entry["description"] = "; ".join(filter(None, [entry["description"], f"{row.name}: {setting.description}"]))
    branches = []
    for row in LOSSES.values():
        required = [name for name, setting in row.settings.items() if setting.default is REQUIRED]
        defaults = {name: {"default": setting.default} for name, setting in row.settings.items() if setting.default not in (REQUIRED, None)}
        defaults.update(
            {name: {"default": None} for name, setting in row.settings.items() if setting.default is None and _nullable(setting)}
        )
        if row.label_smoothing is not None:
            defaults["label_smoothing"] = {"default": row.label_smoothing}
        condition: dict[str, Any] = {"properties": {"loss": {"const": row.name}}}
        if row.name != DEFAULT_LOSS:  # an objective without `loss` is a GOLD objective
            condition["required"] = ["loss"]
        then: dict[str, Any] = {}
        if required:
            then["required"] = required
        if defaults:
            then["properties"] = defaults
        if then:
            branches.append({"if": condition, "then": then})
    return {
        "description": "One fine-tuning objective: starts from the MLE model of its seed (or `start_from`) and trains on the task's "
        "`fine_tune` schedule (learning rate, updates, batches, checkpoint selection); objectives differ only in their loss.",
        "type": "object",
        "additionalProperties": False,
        "properties": properties,
        "allOf": branches,
    }


def _nullable(setting: Setting) -> bool:
    kind = setting.schema.get("type")
    return (isinstance(kind, list) and "null" in kind) or None in setting.schema.get("enum", ())
