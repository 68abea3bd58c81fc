"""Each job's outputs as the job wrote them, checked where the next job reads them.

The plan finds an output changed in place before it runs anything (file_times.py). This closes the gap
after it: a job that starts later (on a cluster, hours after the plan) checks each input against what the
job that wrote it recorded when it finished (`.snakemake/gold_textgen/job_outputs/`: the input's listing
and digest) and against the run's record (file_times.py), which holds what the plan took as an output's
new contents. An input whose listing
moved is read again; one whose contents differ stops the job with the file's name and the way out, so a
model swapped or a table edited between the plan and the job is never read silently. Unchanged inputs
cost a listing (stat calls); each output is hashed once, by the job that wrote it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .errors import StepError
from .file_times import listing, output_digest, read_record, write_job_record, written_record


def record_outputs(names: Iterable[str], workdir: Path = Path()) -> None:
    """Record the listing and digest of each output a job wrote, as it finishes."""
    for name in names:
        path = workdir / name
        if path.exists() and not path.is_symlink():
            write_job_record(workdir, name, listing(path), output_digest(path))


def changed_inputs(names: Iterable[str], workdir: Path = Path()) -> list[str]:
    """The inputs whose contents are neither those their job recorded nor those the run's record holds (the
    plan takes an output changed in place as the new one: file_times.changed_in_place records it there). An
    input whose listing alone moved (a copy, a restored time) has its new listing recorded, so it is read
    once."""
    run_record = read_record(workdir)
    changed = []
    for name in names:
        path = workdir / name
        known = [record for record in (written_record(workdir, name), run_record.get(name)) if record]
        if not known or not path.exists() or path.is_symlink():
            continue
        state = listing(path)
        if any(state == record.get("listing") for record in known):
            continue
        digest = output_digest(path)
        if all(digest != record.get("digest") for record in known):
            changed.append(name)
        else:
            write_job_record(workdir, name, state, digest)
    return changed


def refuse_changed_inputs(names: Iterable[str], workdir: Path = Path()) -> None:
    changed = changed_inputs(names, workdir)
    if changed:
        raise StepError(
            f"{', '.join(changed)}: changed after the job that wrote {'it' if len(changed) == 1 else 'them'} finished "
            "(the contents are not the recorded ones), so this job does not read it; run the workflow again: "
            "its plan finds the change and reruns what reads it (or put the file back)"
        )
