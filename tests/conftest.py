"""Shared test helpers: the repository paths and a Snakemake runner with a hard timeout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")


def run_snakemake(workdir: Path, *args: str, timeout: int = 900, check: bool = True) -> subprocess.CompletedProcess:
    """Run the project's workflow in `workdir` (outputs land there); every call has a hard timeout."""
    command = [str(SNAKEMAKE), "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), *args]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed ({result.returncode}):\n{result.stdout[-4000:]}\n{result.stderr[-6000:]}")
    return result


@pytest.fixture
def smoke_config(tmp_path: Path) -> Path:
    """A copy of configs/smoke.yaml the test may edit."""
    target = tmp_path / "smoke.yaml"
    shutil.copy(REPO / "configs" / "smoke.yaml", target)
    return target
