"""A job's log (runtime/logs.py): a step that stops for a reason (StepError, a config or data file that breaks
its contract) ends its log with that reason
and exits 1 without a traceback; anything else is logged with its traceback and raised as it was."""

import pytest

from gold_textgen.data.records import load_parallel
from gold_textgen.data.sources.download import fetch
from gold_textgen.runtime.logs import log_to_file


def test_a_failed_download_ends_its_log_with_what_to_do(tmp_path):
    log = tmp_path / "download.log"
    with pytest.raises(SystemExit) as stopped, log_to_file(log):
        fetch((tmp_path / "missing.zip").as_uri(), tmp_path / "archive")
    assert stopped.value.code == 1
    text = log.read_text()
    assert "Traceback" not in text
    last = text.strip().splitlines()[-1]
    assert "step stopped: could not download file://" in last and "place it at" in last and "file:///path/to/the/file" in last
    assert "pinned checksum" not in last  # none is pinned: no promise of a check


def test_a_users_file_that_breaks_the_data_contract_ends_its_log_with_the_file_and_line(tmp_path, capsys):
    """prepare_dataset on parallel files of unequal length: the reason, not a traceback (DataFormatError)."""
    (tmp_path / "train.src").write_text("a b\nc d\ne\n")
    (tmp_path / "train.tgt").write_text("x\ny\n")
    log = tmp_path / "data.log"
    with pytest.raises(SystemExit) as stopped, log_to_file(log):
        load_parallel(tmp_path / "train.src", tmp_path / "train.tgt")
    text = log.read_text()
    assert stopped.value.code == 1 and "Traceback" not in text
    assert "step stopped: " in text and "train.tgt:3: " in text and "parallel files must be line-aligned" in text.strip().splitlines()[-1]
    said = capsys.readouterr().err  # the job's stderr: what the driver's terminal shows
    assert said.startswith("step stopped: ") and "train.tgt:3: " in said and f"(log: {log})" in said and "Traceback" not in said


def test_a_bug_keeps_its_traceback(tmp_path):
    log = tmp_path / "bug.log"
    with pytest.raises(ZeroDivisionError), log_to_file(log):
        1 / 0  # noqa: B018
    assert "Traceback" in log.read_text() and "step failed" in log.read_text()
