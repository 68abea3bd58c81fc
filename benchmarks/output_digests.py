"""What knowing outputs by their contents costs (runtime/file_times.py, runtime/output_records.py): the
check every plan makes on a finished experiment folder, the check a job makes of its inputs before it reads
them, the record a job makes of its outputs as it ends, and the digest of a large model file, which a plan
or a job reads again only for an output whose listing changed.

    python -m benchmarks.output_digests --workdir <a folder holding a finished run> [--large-mb 1024]
        [--repeats 3] [--record docs/benchmarks.md]

Five figures, each the median of `--repeats`: the plan-time check (`fold_job_records`, `restore` and
`changed_in_place`) on the folder as it is (nothing changed: stat calls only), the same check after a copy
that gives every file new status times (every recorded output read again once), a job's check of inputs
(every recorded output taken as one job's inputs: stat calls only), the records a job writes of its
outputs (every recorded output hashed once, as the jobs that wrote them did between them), and the sha256
of a file of `--large-mb` MB written for the measurement (a model's weights). With `--record` the table, with the commit and the
machine, replaces the block in the page.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.page_blocks import markers, rewrite_block
from benchmarks.this_machine import commit, machine
from gold_textgen.runtime import file_times, output_records
from gold_textgen.runtime.files import file_digest

COMMAND = "python -m benchmarks.output_digests"
BEGIN, END = markers("output-digests", COMMAND)


def timed(action, repeats: int) -> float:
    """The median wall time, in seconds, of one call of the given action."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def plan_check(workdir: Path) -> None:
    file_times.fold_job_records(workdir)
    file_times.restore(workdir)
    changed = file_times.changed_in_place(workdir)
    if changed:
        raise SystemExit(f"{workdir}: outputs changed in place ({', '.join(changed[:3])}): measure on a finished run")


def file_count(path: Path) -> int:
    return sum(1 for member in path.rglob("*") if member.is_file()) if path.is_dir() else int(path.is_file())


def check_after_a_copy(workdir: Path, copy: Path) -> float:
    """Seconds of the plan's check on a copy of `workdir`'s results (file times kept, status times new)."""
    shutil.copytree(workdir / "results", copy / "results", copy_function=shutil.copy2)
    shutil.copytree(workdir / file_times.RECORD.parent, copy / file_times.RECORD.parent)
    start = time.perf_counter()
    plan_check(copy)
    return time.perf_counter() - start


def measure(workdir: Path, large_mb: int, repeats: int) -> dict[str, float]:
    entries = file_times.read_record(workdir)
    if not entries:
        raise SystemExit(f"{workdir}: no recorded outputs ({file_times.RECORD}): run an experiment there first")
    files = sum(file_count(workdir / name) for name in entries)
    unchanged = timed(lambda: plan_check(workdir), repeats)
    inputs = timed(lambda: refuse_changes(workdir, sorted(entries)), repeats)
    recorded = timed(lambda: [(file_times.listing(workdir / name), file_times.output_digest(workdir / name)) for name in entries], repeats)
    with tempfile.TemporaryDirectory() as scratch:
        copied = statistics.median(check_after_a_copy(workdir, Path(scratch) / f"copy{number}") for number in range(repeats))
        large = Path(scratch) / "weights.bin"
        with open(large, "wb") as handle:
            for _ in range(large_mb):
                handle.write(os.urandom(1 << 20))
        digest = timed(lambda: file_digest(large), repeats)
    figures = {"unchanged": unchanged, "copied": copied, "inputs": inputs, "recorded": recorded, "large": digest}
    return {"outputs": len(entries), "files": files, **figures}


def refuse_changes(workdir: Path, names: list[str]) -> None:
    changed = output_records.changed_inputs(names, workdir)
    if changed:
        raise SystemExit(f"{workdir}: inputs changed since they were recorded ({', '.join(changed[:3])}): measure on a finished run")


def recorded_text(figures: dict[str, float], workdir: Path, large_mb: int) -> str:
    return "\n".join(
        [
            f"Measured at {commit()} on {machine()} (`{COMMAND} --workdir {workdir} --large-mb {large_mb}`), median of the repeats:",
            "",
            "| what | seconds |",
            "| --- | --- |",
            f"| the plan's check of {figures['outputs']} recorded outputs ({figures['files']} files), nothing changed "
            f"| {figures['unchanged']:.3f} |",
            f"| the same after a copy that gives every file new status times (each output read again once) | {figures['copied']:.3f} |",
            f"| a job's check of its inputs, all {figures['outputs']} outputs taken as one job's inputs, nothing changed "
            f"| {figures['inputs']:.3f} |",
            f"| the jobs' records of those {figures['outputs']} outputs as they end (each hashed once) | {figures['recorded']:.3f} |",
            f"| the sha256 of one {large_mb} MB file (an output read again) | {figures['large']:.3f} |",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, required=True, help="a folder holding a finished run (results/ and .snakemake/)")
    parser.add_argument("--large-mb", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--record", type=Path, help="the page whose output-digests block to rewrite (docs/benchmarks.md)")
    args = parser.parse_args(argv)
    text = recorded_text(measure(args.workdir, args.large_mb, args.repeats), args.workdir, args.large_mb)
    print(text)
    if args.record:
        rewrite_block(args.record, BEGIN, END, text)


if __name__ == "__main__":
    main()
