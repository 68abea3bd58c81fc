"""The kinds of name tests/test_names_in_prose.py checks beyond paths, classes, calls, modules and config
keys: a bare snake_case name, a dotted `module.name` (defined in that module, not another), a library's
attribute (`torch.no_grad`), a make target, and a path written outside backticks."""

from __future__ import annotations

import ast
import importlib
import re
from functools import cache
from pathlib import Path

from conftest import REPO

SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
DOTTED = re.compile(r"([a-z_][a-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)")
MAKE = re.compile(r"make ([a-z][a-z-]*)\b")
# A path in plain prose: a folder of this project, then a file name with a suffix of its files.
FOLDERS = "src|tests|configs|benchmarks|workflow_scripts|rules|docs"
PLAIN_PATH = re.compile(rf"(?<![\w/.`-])((?:{FOLDERS})/[\w./-]*\w\.(?:py|yaml|md|smk))(?![\w`])")
LIBRARY_ROOTS = ("torch", "transformers", "trl", "peft", "datasets", "tokenizers", "pandas", "numpy", "scipy", "sacrebleu", "snakemake")


@cache
def definitions(tracked: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """Per module stem (a file's name without .py; several files may share one), the names it defines at any
    depth: classes, functions, their parameters, assigned names and attributes."""
    found: dict[str, set[str]] = {}
    for name in tracked:
        if not name.endswith(".py"):
            continue
        names = found.setdefault(Path(name).stem, set())
        for node in ast.walk(ast.parse((REPO / name).read_text())):
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names.update(argument.arg for argument in (*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs))
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            for target in targets:
                names.update(item.id for item in ast.walk(target) if isinstance(item, ast.Name))
                names.update(item.attr for item in ast.walk(target) if isinstance(item, ast.Attribute))
            if isinstance(node, ast.keyword) and node.arg:
                names.add(node.arg)
    return {stem: frozenset(names) for stem, names in found.items()}


@cache
def make_targets() -> frozenset[str]:
    return frozenset(re.findall(r"^([a-z][a-z-]*):", (REPO / "Makefile").read_text(), re.M))


def library_attribute(name: str) -> bool | None:
    """Whether a dotted name under a library resolves there (None: no library's name)."""
    parts = name.removesuffix("()").split(".")
    if parts[0] not in LIBRARY_ROOTS or len(parts) < 2:
        return None
    for split in range(len(parts), 0, -1):  # the longest importable module, then attributes
        try:
            node = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            if not hasattr(node, attribute):
                return False
            node = getattr(node, attribute)
        return True
    return False
