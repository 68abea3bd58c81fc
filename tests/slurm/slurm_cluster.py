"""The test SLURM cluster (tests/slurm/start_cluster.sh): whether it answers, a profile for it, and the
jobs a test left in its queue."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import REPO


def cluster_answers() -> bool:
    if not shutil.which("sinfo"):
        return False
    result = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=30)
    return result.returncode == 0 and any(state in result.stdout for state in ("idle", "mixed", "allocated"))


def require_cluster() -> None:
    """Skip the test when no cluster answers; fail it when GOLD_REQUIRE_SLURM=1 (CI started one)."""
    if not cluster_answers():
        if os.environ.get("GOLD_REQUIRE_SLURM") == "1":
            pytest.fail("GOLD_REQUIRE_SLURM=1 but no SLURM cluster answers (start it: bash tests/slurm/start_cluster.sh)")
        pytest.skip("no SLURM cluster answers (bash tests/slurm/start_cluster.sh starts one)")


def cluster_profile(folder: Path, **settings) -> Path:
    """profiles/slurm as shipped (the test cluster has its `cpu` and `gpu` partitions), polling faster,
    with `settings` (profile keys, `_` for `-`) on top."""
    profile = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
    profile.update({"jobs": 4, "latency-wait": 5, "retries": 0, "keep-going": False, "slurm-init-seconds-before-status-checks": 2})
    profile.update({key.replace("_", "-"): value for key, value in settings.items()})
    target = folder / "profile"
    target.mkdir()
    (target / "config.yaml").write_text(yaml.safe_dump(profile))
    return target


def jobs_in(workdir: Path) -> list[str]:
    """The SLURM jobs queued or running with `workdir` as their working directory."""
    listing = subprocess.run(["squeue", "-h", "-o", "%i %Z"], capture_output=True, text=True, timeout=30).stdout
    return [line.split()[0] for line in listing.splitlines() if str(workdir) in line]


def cancel_jobs_in(workdir: Path) -> None:
    """Leave no job of this test queued (a failed or timed-out run may)."""
    ids = jobs_in(workdir)
    if ids:
        subprocess.run(["scancel", *ids], timeout=30, check=False)
