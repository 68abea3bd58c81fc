"""Process-level setup shared by every workflow step: logs, seeds, threads."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import torch
import transformers


@contextlib.contextmanager
def log_to_file(path: str | os.PathLike | None) -> Iterator[None]:
    """Send stdout, stderr, Python logging and transformers' logging (progress bars included) to `path`.

    Snakemake's `script:` runs in its own process without redirecting output, so without this a rule's
    progress would land on the driver's terminal instead of `logs/{rule}/...log`.
    """
    if path is None:
        yield
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", buffering=1, encoding="utf-8") as handle:
        old_out, old_err = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = handle
        handler = logging.StreamHandler(handle)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root = logging.getLogger()
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        transformers.logging.set_verbosity_info()
        transformers.logging.disable_default_handler()
        transformers.logging.enable_propagation()
        try:
            yield
        except BaseException:
            logging.getLogger("gold_textgen").exception("step failed")
            raise
        finally:
            root.removeHandler(handler)
            sys.stdout, sys.stderr = old_out, old_err


def set_threads(threads: int) -> None:
    """Pin torch's intra-op threads to what the rule was given, so jobs sharing a node don't oversubscribe."""
    torch.set_num_threads(max(1, int(threads)))


def seed_everything(seed: int) -> None:
    transformers.set_seed(seed)


def pick_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
