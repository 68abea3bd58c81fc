"""Where a benchmark ran, as the pages that quote its measurements name it: the checkout's commit and the
machine's processor with the cores this process may use."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def commit(revision: str = "HEAD") -> str:
    """The short commit id of `revision` in this checkout ("unknown" outside a git checkout)."""
    result = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", revision], capture_output=True, text=True)
    return result.stdout.strip() or "unknown"


def machine() -> str:
    """e.g. "Intel(R) Xeon(R) Processor, 2 cores": the processor's model name and the usable cores."""
    names = [line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")]
    return f"{names[0] if names else platform.processor()}, {len(os.sched_getaffinity(0))} cores"
