"""The cost plan of a fresh clone (no past run: the counts of cost.expected_updates) against the measured
runs of docs/benchmarks.md (tests/test_workflow_experiments.py costs every shipped experiment)."""

import re
import time
from pathlib import Path

import pytest
import yaml
from conftest import REPO, run_snakemake

from gold_textgen.cli.cost import cost_report
from gold_textgen.workflow.layers import merged_config
from gold_textgen.workflow.schema import validate_config

CPU_PROFILE = REPO / "benchmarks" / "devices" / "cpu-epyc-2core.yaml"
# The benchmark table's rows: the experiment, then its measured wall time in seconds.
MEASURED_ROW = re.compile(r"^\| (demo|nqg_real) \(`[^|]*\| ([\d,.]+) s ", re.M)
TOLERANCE = 0.30  # the plan before a first run is within 30% of the measured wall time


def measured_walls() -> dict[str, float]:
    rows = MEASURED_ROW.findall((REPO / "docs" / "benchmarks.md").read_text())
    return {name: float(seconds.replace(",", "")) for name, seconds in rows}


def fresh_plan(workdir: Path, configs: list[Path]) -> float:
    """The expected wall time `gold-textgen plan --device` gives in a folder without results on 2 cores."""
    start = time.perf_counter()
    output = run_snakemake(workdir, "-n", *(["--configfile", *map(str, configs)] if configs else [])).stdout
    startup = time.perf_counter() - start  # the dry run stands for the workflow's start, as in the CLI
    config = validate_config(merged_config(REPO / "config.yaml", configs))
    _, wall = cost_report(config, str(CPU_PROFILE), output, 2, startup, workdir)
    return wall


@pytest.mark.workflow
def test_a_fresh_clones_plan_is_within_30_percent_of_the_measured_runs(tmp_path):
    """The demo's three seeds and nqg_real's seed 1 (the benchmark table's runs), planned from nothing."""
    measured = measured_walls()
    assert set(measured) == {"demo", "nqg_real"}, "docs/benchmarks.md's table of measured runs changed its rows"
    seed_one = tmp_path / "seed1.overrides.yaml"  # settings only: the experiment keeps its name
    seed_one.write_text(yaml.safe_dump({"experiment": {"seeds": [1]}}))
    runs = {"demo": [], "nqg_real": [REPO / "configs" / "nqg_real.yaml", seed_one]}
    for name, configs in runs.items():
        planned = fresh_plan(tmp_path / name, configs)
        assert abs(planned / measured[name] - 1) <= TOLERANCE, f"{name}: planned {planned:.0f} s, measured {measured[name]:.0f} s"
