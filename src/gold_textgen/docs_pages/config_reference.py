"""The configuration reference (docs/reference/config.md), generated from the config schema: every key
with its type, default and description, section by section, so the manual never drifts from what the
workflow checks (`python -m gold_textgen.docs_pages.generated_pages` writes it)."""

from __future__ import annotations

import json

from ..config.schema import load_schema

HEADER = """# Configuration reference

Every key of an experiment's config, as `src/gold_textgen/config/config.schema.yaml` defines and checks
it (this page is generated from that file: `python -m gold_textgen.docs_pages.generated_pages`). Keys left
out take their defaults; an unknown key or a bad value stops the run before any job starts, naming the key
and the file that set it. `<task>`, `<decoder>` and `<objective>` stand for names you choose.
"""


def type_of(node: dict) -> str:
    if "enum" in node:
        return " \\| ".join(f"`{json.dumps(value)}`" for value in node["enum"])
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    kind = node.get("type", "")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    if "array" in kinds and isinstance(node.get("items"), dict) and node["items"].get("type"):
        kinds = [f"array of {node['items']['type']}" if k == "array" else k for k in kinds]
    if "$ref" in node:
        kinds.append(node["$ref"].rsplit("/", 1)[-1])
    return ", ".join(str(k) for k in kinds) or "see below"


def default_of(node: dict) -> str:
    return f"`{json.dumps(node['default'])}`" if "default" in node else ""


def cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


class Reference:
    def __init__(self, schema: dict):
        self.schema, self.sections = schema, []

    def definition(self, reference: str) -> dict:
        return self.schema["$defs"][reference.rsplit("/", 1)[-1]]

    def resolve(self, node: dict) -> dict:
        """`node` with its `$ref` and its unconditional `allOf` references (shared settings) merged in."""
        while "$ref" in node:
            node = {**self.definition(node["$ref"]), **{k: v for k, v in node.items() if k != "$ref"}}
        shared = [self.resolve(branch) for branch in node.get("allOf", []) if "$ref" in branch and "if" not in branch]
        if shared:
            properties = {key: value for branch in shared for key, value in branch.get("properties", {}).items()}
            node = {**node, "properties": {**properties, **node.get("properties", {})}}
        return node

    def section(self, title: str, prefix: str, node: dict, note: str = "") -> None:
        node = self.resolve(node)
        rows, nested = [], []
        for key, child in node.get("properties", {}).items():
            child = self.resolve(child)
            path = f"{prefix}.{key}" if prefix else key
            if child.get("properties") and child.get("type") in ("object", ["object", "null"]):
                nested.append((path, child))
                rows.append(f"| `{path}` | object | | {cell(child.get('description', ''))} (see `{path}` below) |")
            else:
                rows.append(f"| `{path}` | {type_of(child)} | {default_of(child)} | {cell(child.get('description', ''))} |")
        if rows:
            introduction = [cell(note), ""] if note else []
            body = [f"## {title}", "", *introduction, "| key | type | default | description |", "|---|---|---|---|", *rows, ""]
            self.sections.append("\n".join(body))
        for path, child in nested:
            self.section(f"`{path}`", path, child)
        for branch in node.get("allOf", []):
            condition = branch.get("if", {}).get("properties", {})
            then = branch.get("then")
            if then and condition:
                ((key, value),) = ((k, v.get("const")) for k, v in condition.items())
                self.section(f"`{prefix}` with `{key}: {value}`", prefix, then)


def markdown() -> str:
    schema = load_schema()
    reference = Reference(schema)
    properties = schema["properties"]
    for key in ("experiment", "cost", "analysis"):
        reference.section(f"`{key}`", key, properties[key], properties[key].get("description", ""))
    reference.section("`training_logger`", "", {"properties": {"training_logger": properties["training_logger"]}})
    reference.section("`tasks.<task>`", "tasks.<task>", schema["$defs"]["task"], properties["tasks"].get("description", ""))
    reference.section("`tasks.<task>.objectives.<objective>`", "tasks.<task>.objectives.<objective>", schema["$defs"]["objective"])
    decoders = properties["decoders"].get("description", "")
    reference.section("`decoders.<decoder>`", "decoders.<decoder>", schema["$defs"]["decoder"], decoders)
    return HEADER + "\n" + "\n".join(reference.sections)
