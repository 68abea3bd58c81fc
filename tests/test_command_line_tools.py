"""The command-line tools and up-front checks say what is wrong instead of printing a traceback."""

import pytest

from benchmarks import decoding as bench_decoding
from benchmarks import step_time as bench_step_time
from gold_textgen.runtime import cluster


def test_bench_decoding_names_a_missing_model_from_any_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # outside the project root: the default config is still found
    with pytest.raises(SystemExit):
        bench_decoding.main(["--model", "results/models/demo/mle/seed1", "--data", "results/data/demo/test.jsonl"])
    assert "--model results/models/demo/mle/seed1: no such file or directory" in capsys.readouterr().err
    assert bench_decoding.DEFAULT_CONFIG.is_file()


def test_a_slurm_run_without_slurms_commands_is_refused_up_front(monkeypatch):
    monkeypatch.setattr(cluster.shutil, "which", lambda command: None if command in ("sbatch", "squeue") else f"/usr/bin/{command}")
    problem = cluster.slurm_client_problem("slurm")
    assert "sbatch, squeue are not on PATH" in problem and "login node" in problem
    assert cluster.slurm_client_problem("local") is None
    monkeypatch.setattr(cluster.shutil, "which", lambda command: f"/usr/bin/{command}")
    assert cluster.slurm_client_problem("slurm") is None


def test_bench_step_time_names_an_unknown_step(capsys):
    with pytest.raises(SystemExit):
        bench_step_time.main(["--only", "mle,dft,gold_sometimes"])
    error = capsys.readouterr().err
    assert "unknown step(s) gold_sometimes" in error and "gold_cached" in error


def test_the_reference_nqg_benchmark_names_a_folder_that_is_no_focusseq2seq_checkout(tmp_path, capsys):
    from benchmarks import reference_nqg

    with pytest.raises(SystemExit):
        reference_nqg.main(["--reference", str(tmp_path)])
    assert f"--reference {tmp_path}: not a FocusSeq2Seq checkout" in capsys.readouterr().err
