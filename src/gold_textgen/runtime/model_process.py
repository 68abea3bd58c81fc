"""Process-level setup of the steps that run a model: threads, memory allocator, seeds, device."""

from __future__ import annotations

import os

import torch
import transformers

from .allocator import reuse_freed_memory


def set_threads(threads: int) -> None:
    """Pin torch's intra-op threads to what the rule was given, so jobs sharing a node don't oversubscribe."""
    torch.set_num_threads(max(1, int(threads)))


def prepare_model_process(threads: int) -> None:
    """What every process that trains or runs a model does first: its threads, then the allocator."""
    set_threads(threads)
    reuse_freed_memory()


def seed_everything(seed: int) -> None:
    transformers.set_seed(seed)


def is_main_process() -> bool:
    """The first (or only) process of a training run: torchrun and accelerate set RANK for each worker."""
    return os.environ.get("RANK", "0") == "0"


def pick_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
