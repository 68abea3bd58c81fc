"""Inputs checked where a job reads them (runtime/output_records.py): what the job that wrote an input
recorded, or what the plan took as current, is read; anything changed after that stops the job with the
file's name. The plan folds the jobs' records into the run's (runtime/file_times.py)."""

from __future__ import annotations

import json
import os

import pytest

from gold_textgen.runtime import file_times, output_records
from gold_textgen.runtime.errors import StepError
from gold_textgen.runtime.files import content_digest


@pytest.fixture
def written(tmp_path, monkeypatch):
    """A folder with two outputs of a finished job: a scores file and a model folder."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scores.json").write_text('{"bleu": 1.0}')
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "weights.bin").write_bytes(b"\0" * 64)
    output_records.record_outputs(["scores.json", "model"])
    return tmp_path


def test_unchanged_inputs_are_read_and_one_changed_after_its_job_is_refused_by_name(written):
    assert output_records.changed_inputs(["scores.json", "model", "raw_data.txt"]) == []
    (written / "model" / "weights.bin").write_bytes(b"\1" * 64)
    with pytest.raises(StepError, match=r"^model: changed after the job that wrote it finished"):
        output_records.refuse_changed_inputs(["scores.json", "model"])


def test_an_input_whose_listing_alone_moved_is_hashed_once(written, monkeypatch):
    later = os.stat(written / "scores.json").st_mtime + 60
    os.utime(written / "scores.json", (later, later))  # a copy or a touch: same contents
    assert output_records.changed_inputs(["scores.json"]) == []

    def no_digest(path):
        raise AssertionError(f"{path} hashed again")

    monkeypatch.setattr(output_records, "output_digest", no_digest)
    assert output_records.changed_inputs(["scores.json"]) == []


def test_the_plan_folds_the_jobs_records_and_takes_a_change_made_after_the_job(written):
    """An output edited after its job, its time put back: the plan gives it the current time (what reads it
    reruns) and records its new contents, so the job that reads it next accepts it; the jobs' records are
    folded into the run's and removed."""
    scores = written / "scores.json"
    before = os.stat(scores)
    scores.write_text('{"bleu": 2.0}')
    os.utime(scores, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert file_times.fold_job_records(written) == ["scores.json"]
    assert os.stat(scores).st_mtime_ns > before.st_mtime_ns
    assert not list((written / file_times.JOB_RECORDS).glob("*.json"))
    assert set(json.loads((written / file_times.RECORD).read_text())) == {"scores.json", "model"}
    assert output_records.changed_inputs(["scores.json", "model"]) == []
    scores.write_text('{"bleu": 3.0}')  # after the plan
    assert output_records.changed_inputs(["scores.json", "model"]) == ["scores.json"]


def test_a_new_time_with_new_contents_is_taken_by_the_plan_that_sees_it(written):
    """An edited input with a new time: Snakemake reruns what reads it, and those jobs read the edit."""
    file_times.fold_job_records(written)
    scores = written / "scores.json"
    scores.write_text('{"bleu": 4.0}')
    os.utime(scores, (os.stat(scores).st_mtime + 60,) * 2)
    assert output_records.changed_inputs(["scores.json"]) == ["scores.json"]  # before any plan saw it
    assert file_times.restore(written) == 0  # no time given back: the contents changed
    assert output_records.changed_inputs(["scores.json"]) == []


def test_a_folder_recorded_by_its_job_has_the_digest_it_has_once_snakemake_stamped_it(written):
    """Snakemake puts an empty `.snakemake_timestamp` in a `directory()` output after its job ended: the
    job's record counts it in, so the plan's digest of the stamped folder is the job's."""
    recorded = file_times.written_record(written, "model")["digest"]
    (written / "model" / file_times.TIMESTAMP).touch()
    (written / "model" / "sub").mkdir()
    assert content_digest(written / "model") == recorded
    (written / "model" / "sub" / "a.bin").write_bytes(b"x")
    (written / "model" / file_times.TIMESTAMP).unlink()
    assert file_times.output_digest(written / "model") != recorded
    (written / "model" / file_times.TIMESTAMP).touch()
    assert file_times.output_digest(written / "model") == content_digest(written / "model")
