"""The cost plan of a fresh clone (no past run: the counts of cost.expected_updates) against the measured
runs of docs/benchmarks.md (tests/test_workflow_experiments.py costs every shipped experiment)."""

import re

import pytest
from conftest import REPO, planned_wall

# The benchmark table's rows: the experiment, then its measured wall time in seconds.
MEASURED_ROW = re.compile(r"^\| (demo|nqg_real) \(`[^|]*\| ([\d,.]+) s ", re.M)
TOLERANCE = 0.30  # the plan before a first run is within 30% of the measured wall time


def measured_walls() -> dict[str, float]:
    rows = MEASURED_ROW.findall((REPO / "docs" / "benchmarks.md").read_text())
    return {name: float(seconds.replace(",", "")) for name, seconds in rows}


@pytest.mark.workflow
def test_a_fresh_clones_plan_is_within_30_percent_of_the_measured_runs(tmp_path):
    """The demo's and nqg_real's three seeds (the benchmark table's runs), planned from nothing."""
    measured = measured_walls()
    assert set(measured) == {"demo", "nqg_real"}, "docs/benchmarks.md's table of measured runs changed its rows"
    runs = {"demo": [], "nqg_real": [REPO / "configs" / "nqg_real.yaml"]}
    for name, configs in runs.items():
        planned = planned_wall(tmp_path / name, configs, startup_timed=True)
        assert abs(planned / measured[name] - 1) <= TOLERANCE, f"{name}: planned {planned:.0f} s, measured {measured[name]:.0f} s"
