"""What `gold-textgen sft --config x.yaml` (sft_command.py) checks before it trains, so that a bad file ends
in one line that names the file and what is wrong in it (its line, key, data row or folder), never in a
library's traceback: the YAML itself, TRL's arguments, the model folders, the data's rows, and the
library errors of preparing the data for training (a tokenizer without the chat template conversational
rows need, say), which are reported with the data files they came from."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import yaml

from ..runtime.errors import ConfigError

ROWS_CHECKED = 1000  # conversational rows checked for their form before training (a malformed one is named)


def read_yaml(path: Path) -> object:
    """The YAML at `path`; a file that is not YAML is named with the line and column where reading stopped."""
    try:
        return yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        raise ConfigError(f"{path}: not valid YAML{where}: {problem} (indent with spaces, not tabs)") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot be read ({error.strerror or error})") from None


def looks_local(name: str) -> bool:
    """Whether a model name is meant as a folder on this machine rather than a hub name (`org/model`)."""
    return name.startswith(("/", "./", "../", "~")) or name.count("/") > 1 or Path(name).exists()


def check_model_source(name: str | None, key: str, path: Path) -> None:
    """A model named by `key` that is meant as a local folder must be one holding a model (config.json, or
    a LoRA adapter's adapter_config.json)."""
    if not name or not looks_local(name):
        return
    folder = Path(name).expanduser()
    if not folder.is_dir():
        raise ConfigError(f"{path}: {key}: {name} is no folder on this machine (nor a hub name such as Qwen/Qwen3-0.6B-Base)")
    if not (folder / "config.json").is_file() and not (folder / "adapter_config.json").is_file():
        raise ConfigError(f"{path}: {key}: {name} holds no model (no config.json)")


def check_rows(split, path: Path, files: str) -> None:
    """The training split has rows, and conversational rows (`messages`) are lists of role/content turns:
    the first that is not is named (its number in the split)."""
    if len(split) == 0:
        raise ConfigError(f"{path}: the training data ({files}) has no rows")
    if "messages" not in split.column_names:
        return
    for number, row in enumerate(split.select(range(min(len(split), ROWS_CHECKED)))):
        turns = row["messages"]
        if not isinstance(turns, list) or not all(isinstance(turn, dict) and {"role", "content"} <= set(turn) for turn in turns):
            raise ConfigError(
                f"{path}: row {number} of the training data ({files}): `messages` must be a list of turns with `role` and "
                f"`content`, not {str(turns)[:60]!r}"
            )


@contextlib.contextmanager
def reported(path: Path, what: str) -> Iterator[None]:
    """Library errors while `what` (reading the data, preparing it for training) as one line naming
    `path` and what was being done; a ConfigError passes as it is."""
    try:
        yield
    except ConfigError:
        raise
    except StopIteration:  # a reader that found nothing to read
        raise ConfigError(f"{path}: {what}: it holds no rows (an empty file?)") from None
    except (ValueError, KeyError, TypeError, OSError) as error:
        raise ConfigError(f"{path}: {what}: {type(error).__name__}: {error}") from None
