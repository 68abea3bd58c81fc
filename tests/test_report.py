"""The HTML report of the smoke run, made by `gold-textgen report configs/smoke.yaml`: one self-contained
file, every table and figure shown in a real browser, and results that are not up to date named on its
front page."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import OFFLINE, REPO, driver_environment, run_snakemake
from report_browser import CHROMEDRIVER, CHROMIUM, browse_report

pytestmark = pytest.mark.workflow


# What a project root holds that `gold-textgen report` reads, beside the run's own folders.
PROJECT = ("Snakefile", "rules", "workflow_scripts", "config.yaml", "configs", "profiles")


@pytest.fixture(scope="module")
def report(tiny_run, tmp_path_factory) -> Path:
    """The smoke run's report as a user makes it, `gold-textgen report configs/smoke.yaml` from the project
    root (here one of links: the project's files, the run's results and Snakemake's records), written
    outside the shared run folder (other tests copy that folder)."""
    root, path = tmp_path_factory.mktemp("project"), tmp_path_factory.mktemp("report") / "report.html"
    for name in PROJECT:
        (root / name).symlink_to(REPO / name)
    for name in ("results", "logs", ".snakemake"):
        (root / name).symlink_to(tiny_run / name)
    command = [str(Path(sys.executable).with_name("gold-textgen")), "report", "configs/smoke.yaml", "--output", str(path)]
    result = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=900, env=driver_environment(OFFLINE))
    assert result.returncode == 0, result.stderr[-4000:]
    return path


REPORTED = [
    "results/smoke/figures/demo/nll_histogram.png",
    "results/smoke/figures/demo/nll_by_time_step.png",
    "results/smoke/figures/demo/exposure_bias.png",
]
REPORTED += ["results/smoke/figures/demo/training_curves.png", "results/smoke/figures/objectives.png"]
REPORTED_TABLES = ("main", "table1_main", "table2_decoding", "objectives", "significance", "claims", "demo/diversity", "demo/examples")
REPORTED += [f"results/smoke/tables/{name}.html" for name in REPORTED_TABLES]


@pytest.mark.slow
def test_report_builds_into_one_self_contained_file(report):
    text = report.read_text()
    assert len(text) > 100_000  # figures and tables are embedded, not linked
    assert "Every result in this report was up to date when the report was created" in text
    for name in REPORTED:
        assert name in text


@pytest.mark.slow
def test_the_report_shows_every_table_and_figure_in_a_browser(report):
    """Opened in headless Chromium as a reader would: no console errors, and every figure and table of
    the run shows in the report itself (screenshots in the run's report_screenshots/)."""
    if not (CHROMIUM and CHROMEDRIVER and importlib.util.find_spec("selenium")):
        if os.environ.get("GOLD_REQUIRE_BROWSER") == "1":
            pytest.fail("GOLD_REQUIRE_BROWSER=1 but chromium, chromedriver or selenium is missing")
        pytest.skip("needs chromium and chromium-driver (apt) and selenium (make setup)")
    visit = browse_report(report, report.parent / "report_screenshots")
    assert not visit.console_errors
    assert sorted(visit.shown) == sorted(REPORTED)
    for name, shown in visit.shown.items():
        if name.endswith(".png"):
            assert shown.startswith("image"), name
        else:
            rows = int(shown.split()[2])
            assert rows >= 3, f"{name} shows {shown}"
    table1 = visit.shown["results/smoke/tables/table1_main.html"]
    assert "gold_s" in table1 and "perplexity" in table1


@pytest.mark.slow
def test_a_report_on_stale_results_says_which_are_out_of_date(tiny_run, tmp_path):
    """The report still builds, and its front page and the terminal name what is not current (as
    `snakemake --summary` sees it, with the driver's config files and --config values) instead of a plain
    "Report created": first a changed setting, then edited data and a removed model."""
    workdir = tmp_path / "copy"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("experiment:\n  name: smoke\nanalysis:\n  num_examples: 2\n")  # the smoke experiment, changed
    smoke = str(REPO / "configs" / "smoke.yaml")
    result = run_snakemake(workdir, "--report", "report.html", "--configfile", smoke, str(overlay), "--config", "training_logger=none")
    text = (workdir / "report.html").read_text()
    assert "WARNING: the report shows 3 result(s) that are not up to date" in result.stderr
    assert "**3 result(s) were not up to date**" in text.replace("<strong>", "**").replace("</strong>", "**")
    assert "results/smoke/tables/demo/examples.md (rule examples)" in text

    shutil.rmtree(workdir / "results/smoke/models/demo/gold_p/seed1")
    with (workdir / "results/smoke/data/demo/test.jsonl").open("a") as data:
        data.write(json.dumps({"id": "extra", "source": "a b", "target": "c d"}) + "\n")
    result = run_snakemake(workdir, "--report", "report.html", "--configfile", smoke)
    text = (workdir / "report.html").read_text()
    assert "WARNING: the report shows" in result.stderr and "result(s) were not up to date" in text
    for listed in (
        "results/smoke/models/demo/gold_p/seed1 (rule fine_tune): missing",
        "results/smoke/scores/demo/mle/seed1/test/greedy/sample0.json",
    ):
        assert listed in text and listed in result.stderr
