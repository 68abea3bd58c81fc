"""The cost plan of a fresh clone (no past run: the counts of cost.expected_updates) against the measured
runs of docs/benchmarks.md (tests/test_workflow_experiments.py costs every shipped experiment)."""

import re

import pytest
import yaml
from conftest import REPO, planned_wall

# The benchmark table's rows: the experiment, its seeds, then its measured wall time in seconds.
MEASURED_ROW = re.compile(r"^\| (demo|nqg_real) \(`[^|]*?, (\w+) seeds,[^|]*\| ([\d,.]+) s ", re.M)
SEEDS = {"three": 3, "five": 5}
TOLERANCE = 0.30  # the plan before a first run is within 30% of the measured wall time


def measured_walls() -> dict[str, tuple[int, float]]:
    rows = MEASURED_ROW.findall((REPO / "docs" / "benchmarks.md").read_text())
    return {name: (SEEDS[seeds], float(seconds.replace(",", ""))) for name, seeds, seconds in rows}


@pytest.mark.workflow
def test_a_fresh_clones_plan_is_within_30_percent_of_the_measured_runs(tmp_path):
    """The demo's and nqg_real's runs of the benchmark table, planned from nothing with their seeds."""
    measured = measured_walls()
    assert set(measured) == {"demo", "nqg_real"}, "docs/benchmarks.md's table of measured runs changed its rows"
    runs = {"demo": [], "nqg_real": [REPO / "configs" / "nqg_real.yaml"]}
    for name, configs in runs.items():
        seeds, wall = measured[name]
        overlay = tmp_path / f"{name}-seeds.yaml"
        overlay.write_text(yaml.safe_dump({"experiment": {"seeds": list(range(1, seeds + 1))}}))
        planned = planned_wall(tmp_path / name, [*configs, overlay], startup_timed=True)
        assert abs(planned / wall - 1) <= TOLERANCE, f"{name}: planned {planned:.0f} s, measured {wall:.0f} s"
