"""Reading a config file strictly: what YAML accepts but almost never means becomes an error that names
the file and line.

* A key written twice in one mapping: PyYAML (and so Snakemake) keeps the last one without a word, so a
  second `mle:` block drops the first one's settings. Both lines are named.
* An integer with a leading zero (`seeds: [010]`): YAML 1.1 reads it as octal (8).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from ..runtime.errors import ConfigError

_LEADING_ZERO = re.compile(r"^[-+]?0[0-9_]+$")


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys and leading-zero integers."""

    label = "?"

    def construct_mapping(self, node, deep=False):
        first_line: dict = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if key in first_line:
                raise ConfigError(
                    f"{self.label}:{line}: key '{key}' is written twice in one mapping (first at line {first_line[key]}); "
                    "YAML would keep only the last one: merge the two"
                )
            first_line[key] = line
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node):
        if _LEADING_ZERO.match(node.value):
            raise ConfigError(
                f"{self.label}:{node.start_mark.line + 1}: '{node.value}' has a leading zero, which YAML reads as an "
                f"octal number ({super().construct_yaml_int(node)}); write it without the zero, or quote it for text"
            )
        return super().construct_yaml_int(node)


_StrictLoader.add_constructor("tag:yaml.org,2002:int", _StrictLoader.construct_yaml_int)


def load_strict(text: str, label: str):
    """The YAML document in `text` (`label` names it in errors: a file path)."""
    loader = _StrictLoader(text)
    loader.label = label
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def read_strict(path: str | Path):
    """A YAML file, read strictly (see the module's docstring). A file that cannot be read, is not UTF-8
    text or is not YAML is a ConfigError naming it (and the line and column where reading stopped)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text (byte {error.start}); a config file is YAML text") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot be read ({error.strerror or error})") from None
    try:
        return load_strict(text, str(path))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        lines = text.splitlines()
        line = lines[mark.line] if mark is not None and mark.line < len(lines) else ""  # a mark may lie past the last line
        tabs = " (indent with spaces: YAML reads no tabs)" if "\t" in line[: mark.column + 1] else ""
        raise ConfigError(f"{path}{where}: not valid YAML: {getattr(error, 'problem', None) or error}{tabs}") from None
