"""The error every config check raises: its message names the offending key, which `key_path` reads
back so the workflow can say which config file set it; and the error of a step that stops for a reason
its message explains (a job's log ends with that message, not a traceback)."""

from __future__ import annotations

import re


class ConfigError(ValueError):
    """The experiment config is invalid; the message names the offending key."""

    @property
    def key_path(self) -> list[str | int]:
        """The offending key as a path (`experiment.tasks[0]` -> ['experiment', 'tasks', 0]), read from the message."""
        match = re.search(r"config key ([^\s:(]+)", str(self))
        if not match:
            return []
        return [int(part) if part.isdigit() else part for part in re.split(r"\.|\[|\]", match.group(1)) if part]


class StepError(RuntimeError):
    """A workflow step cannot go on, for a reason its message says with what to do (runtime.logs ends the
    job's log with the message alone)."""
