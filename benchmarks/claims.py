"""Do an experiment's verdicts on the paper's claims hold on any machine? Runs the experiment afresh under
variations that change float paths or the seeds, and writes one verdict table: per registered claim the grid
covers, each variation's verdict (comparisons/claim_verdicts.py), with the power against the paper's effect and the
seeds that would reach 80%.

    python -m benchmarks.claims [--configfile configs/<name>.yaml] [--set KEY=VALUE ...] [--task demo] [--cores 2]
        [--variations one_thread,two_threads,other_seeds] [--workdir DIR] [--record docs/runs/demo]
        [--page docs/results/demo.md]

Variations: `one_thread` (every model job on 1 thread, the resource table's CPU default), `two_threads`
(every model job on 2), `other_seeds` (1 thread, the experiment's seeds shifted by 100). Each runs the
whole workflow in its own folder, nothing reused (`--reuse`: the folders of an earlier call brought up to
date, Snakemake rerunning only what changed); the claims are those its `claims` rule tested. `--record`
keeps what the docs quote (each variation's claims table and Tables 1 and 2, the combined table, the
withdrawn claims, the machine and commit: benchmarks/results_page.py), and `--page` regenerates a results page's
generated blocks from that record.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from gold_textgen.comparisons.demo_signatures import run_checks, verdicts
from gold_textgen.config.layers import config_layers, experiment_name, merge_layers, merged_config
from gold_textgen.config.schema import validate_config
from gold_textgen.config.set_overrides import overrides_layer
from gold_textgen.docs_pages.claims_reference import withdrawn_markdown

from . import results_page
from .demo import MODEL_RULES
from .this_machine import commit, machine

REPO = Path(__file__).resolve().parents[1]
VARIATIONS = {"one_thread": (1, 0), "two_threads": (2, 0), "other_seeds": (1, 100)}  # threads per job, seed shift


def named(overrides: dict, files: list[str]) -> dict:
    """The `--set` overrides as an overlay that keeps the experiment's name (one that sets none would be
    named after its own file)."""
    name = experiment_name(config_layers(REPO / "config.yaml", files))
    return {**overrides, "experiment": {**overrides.get("experiment", {}), "name": name}}


def run_variation(name: str, workdir: Path, configfiles: list[str], overrides: dict, cores: str) -> Path:
    """Run the experiment in `workdir` under variation `name` (the `--set` overrides as a last overlay);
    returns its results folder."""
    threads, shift = VARIATIONS[name]
    files = [str(Path(path).resolve()) for path in configfiles]
    workdir.mkdir(parents=True, exist_ok=True)
    if overrides:
        overlay = workdir / "overrides.yaml"
        overlay.write_text(yaml.safe_dump(named(overrides, files)))
        files.append(str(overlay))
    experiment = validate_config(merged_config(REPO / "config.yaml", files))["experiment"]
    if shift:  # the same experiment (its name kept) on other seeds
        overlay = workdir / "other_seeds.yaml"
        seeds = [seed + shift for seed in experiment["seeds"]]
        overlay.write_text(yaml.safe_dump({"experiment": {"name": experiment["name"], "seeds": seeds}}))
        files.append(str(overlay))
    snakemake = shutil.which("snakemake", path=str(Path(sys.executable).parent)) or "snakemake"
    command = [snakemake, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), "--cores", cores]
    command += ["--set-threads", *(f"{rule}={threads}" for rule in MODEL_RULES)]
    command += ["--configfile", *files] if files else []
    print(f"{name}: {' '.join(command)}", file=sys.stderr, flush=True)
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"{name}: the workflow failed:\n{result.stderr[-3000:]}")
    return workdir / "results" / experiment_name(config_layers(REPO / "config.yaml", files))


def machine_and_commit() -> str:
    return f"{machine()}; commit {commit()}"


def seeds_cell(verdict) -> str:
    """The seeds for 80% power as the claims table shows them: "ruled out" where the paper's effect lies
    above the upper bound (no design question left), "-" where there is no number."""
    if verdict.paper_effect == verdict.paper_effect and verdict.paper_effect > verdict.high:
        return "ruled out"
    return "-" if verdict.seeds_needed != verdict.seeds_needed else f"{verdict.seeds_needed:.0f}"


def verdict_table(results: dict[str, Path], task: str) -> str:
    """Markdown: one row per claim test, each variation's verdict, estimate and bounds at its deciding
    level, then the paper's effect, each variation's power against it, the seeds for 80% and the smallest
    effect its design detects with 80% power; then the run checks that failed."""
    found = {name: verdicts(folder, task) for name, folder in results.items()}
    first = next(iter(found.values()))
    header = ["claim", *results, "paper's effect", "power", "seeds for 80%", "detectable"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    shown = lambda value: "-" if value != value else f"{value:.3g}"  # noqa: E731 (NaN: no number)
    for index, claim in enumerate(first):
        row = [found[name][index] for name in results]
        cells = [f"{v.verdict} {shown(v.estimate)} [{shown(v.low)}, {shown(v.high)}]" for v in row]
        powers = " / ".join(shown(v.power) for v in row)
        needed = " / ".join(seeds_cell(v) for v in row)
        detectable = " / ".join(shown(v.detectable) for v in row)
        lines.append("| " + " | ".join([claim.name, *cells, shown(claim.paper_effect), powers, needed, detectable]) + " |")
    differ = [v.name for index, v in enumerate(first) if len({found[name][index].verdict for name in results}) > 1]
    failed = {name: [check for check, passed, _ in run_checks(folder, task) if not passed] for name, folder in results.items()}
    checks = "; ".join(f"{name}: {', '.join(found)}" for name, found in failed.items() if found) or "none"
    text = (
        "\n".join(lines)
        + f"\n\nRun checks that failed (an MLE run that did not converge, a fine-tuning run that kept its first model): {checks}.\n"
    )
    if len(results) > 1:
        text += "\nVerdicts that differ between variations: " + (", ".join(differ) or "none") + ".\n"
    return text


def record_run(record: Path, results: dict[str, Path], task: str, heading: str, command: list[str], config: dict) -> None:
    """Keep what a results page quotes: per variation its claims, Tables 1 and 2 (and the objectives table
    where the grid writes one) and its runs' training summary (updates made, checkpoint kept) as the
    workflow wrote them; the combined verdict table, the withdrawn claims, the experiment's validated
    config, and where it ran."""
    record.mkdir(parents=True, exist_ok=True)
    (record / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    for name, folder in results.items():
        for table in ("claims.md", "claims.csv", "table1_main.md", "table2_decoding.md", "objectives.md"):
            if (folder / "tables" / table).is_file():
                shutil.copy(folder / "tables" / table, record / f"{name}-{table}")
        shutil.copy(folder / "analysis" / task / "training_summary.csv", record / f"{name}-training_summary.csv")
    (record / "verdicts.md").write_text(heading + verdict_table(results, task))
    (record / "withdrawn.md").write_text(withdrawn_markdown())
    (record / "run.json").write_text(
        json.dumps({"machine": machine_and_commit(), "variations": list(results), "command": command}, indent=1) + "\n"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configfile", action="append", default=[])
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="a config override, read as YAML (experiment.seeds=[1,2,3,4,5])"
    )
    parser.add_argument("--task", default="demo")
    parser.add_argument("--cores", default="2")
    parser.add_argument("--variations", default=",".join(VARIATIONS), help=f"comma-separated, of {', '.join(VARIATIONS)}")
    parser.add_argument("--workdir", type=Path, help="where the variations run, one folder each (default: a new temporary folder)")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="bring the variations already in --workdir up to date (Snakemake reruns only what changed since) instead of clean runs",
    )
    parser.add_argument("--record", type=Path, help="keep the files a results page quotes in this folder")
    parser.add_argument("--page", type=Path, help="regenerate this results page's generated blocks from --record")
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.variations.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in VARIATIONS]
    if unknown:
        parser.error(f"unknown variation {unknown[0]!r} (choose from {', '.join(VARIATIONS)})")
    if args.page and not args.record:
        parser.error("--page regenerates a page from --record: name the record folder")
    base = args.workdir or Path(tempfile.mkdtemp(prefix="gold-bench-claims-"))
    overrides = overrides_layer(args.set)
    if not args.reuse:
        taken = [base / name for name in chosen if (base / name).exists() and any((base / name).iterdir())]
        if taken:
            parser.error(f"{taken[0]} is not empty: each variation needs a clean folder (or --reuse)")
    results = {name: run_variation(name, base / name, args.configfile, overrides, args.cores) for name in chosen}
    heading = f"Claims under {', '.join(chosen)}; {machine_and_commit()}"
    heading += " (folders of an earlier call brought up to date: only what changed since was rerun).\n\n" if args.reuse else ".\n\n"
    print(heading + verdict_table(results, args.task))
    if args.record:
        command = ["python", "-m", "benchmarks.claims", *(argv if argv is not None else sys.argv[1:])]
        files = [str(Path(path).resolve()) for path in args.configfile]
        layers = config_layers(REPO / "config.yaml", files) + ([("--set", named(overrides, files))] if overrides else [])
        record_run(args.record, results, args.task, heading, command, validate_config(merge_layers(layers)))
    if args.page:
        results_page.write(args.page, args.record)


if __name__ == "__main__":
    main()
