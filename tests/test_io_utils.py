import os
import stat

import pytest
import torch

from gold_textgen.runtime.files import atomic_directory, atomic_open, current_umask, read_jsonl, write_json, write_jsonl


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


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_outputs_get_the_modes_the_umask_gives_ordinary_files(tmp_path, umask):
    """Written files and folders are as readable as `open`/`mkdir` would make them, not owner-only."""
    previous = os.umask(umask)
    try:
        assert current_umask() == umask
        write_json(tmp_path / "scores.json", {"bleu": 1.0})
        with atomic_directory(tmp_path / "model") as staging:
            (staging / "weights").write_text("w")
        plain_file, plain_dir = tmp_path / "plain.txt", tmp_path / "plain"
        plain_file.write_text("x")
        plain_dir.mkdir()
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "scores.json").stat().st_mode) == 0o666 & ~umask == stat.S_IMODE(plain_file.stat().st_mode)
    assert stat.S_IMODE((tmp_path / "model").stat().st_mode) == 0o777 & ~umask == stat.S_IMODE(plain_dir.stat().st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_model_weights_get_the_umasks_mode_too(tmp_path, umask):
    """safetensors writes its file 0600; inside a model folder it gets the umask's mode like the rest, so a
    lab-mate who can read the config can read the weights."""
    from safetensors.torch import save_file

    previous = os.umask(umask)
    try:
        with atomic_directory(tmp_path / "model") as staging:
            save_file({"w": torch.zeros(2)}, staging / "model.safetensors")
            os.chmod(staging / "model.safetensors", 0o600)  # as safetensors leaves it on some versions
            (staging / "sub").mkdir(mode=0o700)
            (staging / "sub" / "part.bin").write_bytes(b"x")
    finally:
        os.umask(previous)
    for name in ("model.safetensors", "sub/part.bin"):
        assert stat.S_IMODE((tmp_path / "model" / name).stat().st_mode) == 0o666 & ~umask, name
    assert stat.S_IMODE((tmp_path / "model" / "sub").stat().st_mode) == 0o777 & ~umask


def test_a_killed_writes_temporary_siblings_are_removed_by_the_next_write(tmp_path):
    (tmp_path / ".model.abc123.tmp").mkdir()
    (tmp_path / ".model.abc123.tmp" / "weights").write_text("half")
    (tmp_path / ".scores.json.x9.tmp").write_text("{")
    (tmp_path / ".other.x.tmp").write_text("not ours")
    with atomic_directory(tmp_path / "model") as staging:
        (staging / "weights").write_text("w")
    write_json(tmp_path / "scores.json", {})
    assert sorted(path.name for path in tmp_path.iterdir()) == [".other.x.tmp", "model", "scores.json"]
