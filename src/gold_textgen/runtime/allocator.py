"""The C allocator of a process that runs a model on a CPU (no torch import: a job calls it first)."""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys

# glibc's mallopt parameters (malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
LARGEST_HEAP_BLOCK = 32 * 1024 * 1024  # glibc's ceiling for M_MMAP_THRESHOLD on 64-bit systems
KEPT_FREE_MEMORY = 1024 * 1024 * 1024

log = logging.getLogger(__name__)


def reuse_freed_memory() -> bool:
    """Let glibc's malloc keep freed blocks of up to 32 MB for the next allocation instead of giving them
    back to the system. PyTorch has no caching allocator on a CPU: every tensor of a training step is a
    fresh malloc, and glibc serves those over its mmap threshold with fresh pages, each zeroed by a page
    fault on first touch. A copy model's [positions, vocabulary] tables are tens of megabytes, so those
    faults were about a twelfth of an NQG++ step on a CPU (docs/benchmarks.md). The price: up to 1 GB of freed
    memory stays with the process. True where it took effect (Linux with glibc); elsewhere a no-op."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # another C library (musl has no mallopt)
        return False
    applied = mallopt(M_MMAP_THRESHOLD, LARGEST_HEAP_BLOCK) == 1 and mallopt(M_TRIM_THRESHOLD, KEPT_FREE_MEMORY) == 1
    if not applied:
        log.debug("mallopt refused the allocator settings; freed memory goes back to the system as before")
    return applied
