import pytest

from gold_textgen.workflow.files import atomic_directory, atomic_open, read_jsonl, write_jsonl


def test_failed_write_leaves_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_open(target) as handle:
        handle.write("half")
        raise RuntimeError("crash")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_failed_directory_leaves_nothing(tmp_path):
    target = tmp_path / "model"
    with pytest.raises(RuntimeError), atomic_directory(target) as staging:
        (staging / "weights").write_text("partial")
        raise RuntimeError("crash")
    assert list(tmp_path.iterdir()) == []


def test_directory_replaces_previous_content(tmp_path):
    target = tmp_path / "model"
    target.mkdir()
    (target / "stale").write_text("x")
    with atomic_directory(target) as staging:
        (staging / "fresh").write_text("y")
    assert [p.name for p in target.iterdir()] == ["fresh"]


def test_jsonl_roundtrip_keeps_unicode(tmp_path):
    rows = [{"source": "schön", "target": "nice"}]
    assert write_jsonl(tmp_path / "x.jsonl", rows) == 1
    assert read_jsonl(tmp_path / "x.jsonl") == rows
    assert "schön" in (tmp_path / "x.jsonl").read_text(encoding="utf-8")
