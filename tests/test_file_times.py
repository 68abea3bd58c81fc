"""File times that survive a copy (runtime/file_times.py): an output whose time changed but whose contents
did not gets its recorded time back; one whose contents changed keeps its new time."""

from __future__ import annotations

import os
import shutil

from gold_textgen.runtime import file_times

RECORDED, LATER = 1_700_000_000_000_000_000, 1_800_000_000_000_000_000


def outputs(workdir):
    (workdir / "model").mkdir()
    (workdir / "model" / "weights.bin").write_bytes(b"\x00\x01")
    (workdir / "model" / file_times.TIMESTAMP).touch()
    (workdir / "table.csv").write_text("a,b\n1,2\n")
    for path in (workdir / "model" / file_times.TIMESTAMP, workdir / "table.csv"):
        os.utime(path, ns=(RECORDED, RECORDED))
    return ["model", "table.csv", "never_written.csv"]


def test_unchanged_contents_get_their_recorded_times_back(tmp_path):
    assert file_times.record(tmp_path, outputs(tmp_path)) == 2
    for path in (tmp_path / "model" / file_times.TIMESTAMP, tmp_path / "table.csv", tmp_path / "model" / "weights.bin"):
        os.utime(path, ns=(LATER, LATER))
    assert file_times.restore(tmp_path) == 2
    assert (tmp_path / "table.csv").stat().st_mtime_ns == RECORDED
    assert (tmp_path / "model" / file_times.TIMESTAMP).stat().st_mtime_ns == RECORDED
    assert file_times.restore(tmp_path) == 0  # nothing left to give back


def test_changed_contents_keep_their_new_times(tmp_path):
    file_times.record(tmp_path, outputs(tmp_path))
    (tmp_path / "table.csv").write_text("a,b\n1,3\n")  # same size, other contents
    (tmp_path / "model" / "weights.bin").write_bytes(b"\x00\x02")
    for path in (tmp_path / "model" / file_times.TIMESTAMP, tmp_path / "table.csv"):
        os.utime(path, ns=(LATER, LATER))
    assert file_times.restore(tmp_path) == 0
    assert (tmp_path / "table.csv").stat().st_mtime_ns == LATER
    assert (tmp_path / "model" / file_times.TIMESTAMP).stat().st_mtime_ns == LATER


def test_a_record_reuses_the_digest_of_an_unchanged_output_and_keeps_other_outputs(tmp_path, monkeypatch):
    file_times.record(tmp_path, outputs(tmp_path))
    monkeypatch.setattr(file_times, "content_digest", lambda path: "digest not needed")
    file_times.record(tmp_path, ["table.csv"])
    kept = file_times.read_record(tmp_path)
    assert set(kept) == {"model", "table.csv"} and kept["table.csv"]["digest"] != "digest not needed"


def test_contents_changed_with_their_times_kept_give_the_output_a_new_time(tmp_path):
    """A file swapped inside a model folder (its `.snakemake_timestamp` untouched), and a table overwritten
    with `cp -p` (its time set back): each gets the current time, so what reads it reruns, and is named.
    Times and a copy's new status times alone (contents unchanged) change nothing."""
    file_times.record(tmp_path, outputs(tmp_path))
    shutil.copytree(tmp_path / "model", tmp_path / "copy")  # a chmod, a copy back: new status times, same contents
    shutil.rmtree(tmp_path / "model")
    shutil.copytree(tmp_path / "copy", tmp_path / "model", copy_function=shutil.copy2)
    os.utime(tmp_path / "model" / file_times.TIMESTAMP, ns=(RECORDED, RECORDED))
    assert file_times.changed_in_place(tmp_path) == []
    (tmp_path / "model" / "weights.bin").write_bytes(b"\x00\x02")  # same size, other weights
    (tmp_path / "other.csv").write_text("a,b\n9,9\n")
    os.utime(tmp_path / "other.csv", ns=(RECORDED, RECORDED))
    shutil.copy2(tmp_path / "other.csv", tmp_path / "table.csv")  # cp -p: the recorded time, other contents
    assert (tmp_path / "table.csv").stat().st_mtime_ns == RECORDED
    assert file_times.changed_in_place(tmp_path) == ["model", "table.csv"]
    for path in (tmp_path / "model" / file_times.TIMESTAMP, tmp_path / "table.csv"):
        assert path.stat().st_mtime_ns > RECORDED  # newer than whatever read it
    assert file_times.changed_in_place(tmp_path) == []  # named once: the record now holds the new contents
