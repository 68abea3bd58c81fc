"""Whether the results a report shows are current, said on the report's front page and on the terminal.

`snakemake --report` bundles whatever files exist: after the data was edited or a model was removed it
would report old numbers as if they were current. Snakemake knows better: `--summary` lists every output
with its status (`missing`, `updated input files`, `params changed`, ...) and plan (`update pending`).
When the driver is creating a report, the workflow asks that of a second Snakemake with the same
Snakefile, config files and `--config` values (written to a file of their own), then writes the answer
into the report's description (`workflow.report`) and warns."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

CURRENT = ("ok", "no update")  # (status, plan) of an output that is up to date
SHOWN = 40  # outputs listed by name; the rest are counted


def is_report_run(argv: Sequence[str]) -> bool:
    """Whether these driver arguments create a report (and no run comes first: `--report-after-run`
    reports what the run just made)."""
    if "--report-after-run" in argv:
        return False
    return any(arg.split("=", 1)[0] in ("--report", "--reporter") for arg in argv)


def summary_command(snakefile: str | Path, workdir: str | Path, configfiles: Sequence[str | Path]) -> list[str]:
    """A Snakemake that plans the same workflow with the same config in the same directory and prints its
    summary (no lock: it only reads). Paths are absolute: the driver has already moved into `workdir`."""
    configs = [str(Path(path).resolve()) for path in configfiles]
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(Path(snakefile).resolve()),
        "--directory",
        str(Path(workdir).resolve()),
    ]
    if configs:
        command += ["--configfiles", *configs]
    return [*command, "--summary", "--nolock", "--quiet", "all"]


def out_of_date(summary: str) -> list[dict]:
    """The rows of a `--summary` table whose output is not current."""
    start = summary.find("output_file\t")
    if start < 0:
        raise ValueError("no summary table in Snakemake's output")
    rows = csv.DictReader(io.StringIO(summary[start:]), delimiter="\t")
    return [row for row in rows if (row.get("status"), row.get("plan")) != CURRENT]


def stale_results(snakefile: str | Path, workdir: str | Path, configfiles: Sequence[str | Path], timeout: float = 600) -> list[dict]:
    """The outputs of the default target that are not up to date (see `summary_command`)."""
    command = summary_command(snakefile, workdir, configfiles)
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"`{' '.join(command)}` failed ({result.returncode}): {(result.stderr or result.stdout).strip()[-2000:]}")
    return out_of_date(result.stdout)


def _listed(rows: list[dict]) -> list[str]:
    lines = [f"{row['output_file']} (rule {row['rule']}): {row['status']}, {row['plan']}" for row in rows[:SHOWN]]
    if len(rows) > SHOWN:
        lines.append(f"... and {len(rows) - SHOWN} more (`snakemake --summary` lists them all)")
    return lines


def warning(rows: list[dict]) -> str | None:
    """The terminal's account of out-of-date results (None when every result is current)."""
    if not rows:
        return None
    return f"the report shows {len(rows)} result(s) that are not up to date; run the workflow first:\n  " + "\n  ".join(_listed(rows))


def built_by_older_code(models: dict[str, str]) -> list[str]:
    """The model folders (of `models`: folder -> the code version its training rule runs now) whose
    provenance.json records another code version: trained by code that has changed since."""
    older = []
    for folder, current in models.items():
        record = Path(folder) / "provenance.json"
        if record.is_file() and json.loads(record.read_text(encoding="utf-8")).get("code_version") != current:
            older.append(folder)
    return older


def description(rows: list[dict], when: str | None = None, older_code: Sequence[str] = ()) -> str:
    """The report's front page (reStructuredText): every result current, or which are not and why, and the
    models that code changed since trained (`older_code`)."""
    when = when or time.strftime("%Y-%m-%d %H:%M")
    older = ""
    if older_code:
        listed = "\n".join(f"- ``{folder}``" for folder in older_code[:SHOWN])
        more = f"\n- ... and {len(older_code) - SHOWN} more" if len(older_code) > SHOWN else ""
        older = f"\n**Built by older code**: the code these models' training runs has changed since they were trained.\n\n{listed}{more}\n"
    if not rows:
        return f"Results\n=======\n\nEvery result in this report was up to date when the report was created ({when}).\n{older}"
    items = "\n".join(f"- ``{line}``" for line in _listed(rows))
    return (
        f"Results out of date\n===================\n\n**{len(rows)} result(s) were not up to date** when this report was created "
        f"({when}): the numbers below may be old (``params changed`` includes a change of the code a job runs). Run the "
        f"workflow, then create the report again.\n\n{items}\n{older}"
    )
