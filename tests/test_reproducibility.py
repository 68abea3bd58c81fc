"""Runs reproduce: the same config and seed give the same numbers in an independent run, and sampled
decodings differ between samples yet reproduce one by one."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import REPO, run_snakemake

pytestmark = pytest.mark.workflow


def test_same_config_and_seed_reproduce_identical_scores(tiny_run, tmp_path):
    """A second, independent run of the same config and seed on CPU gives the very same numbers, for MLE
    and for GOLD-s fine-tuned from it."""
    objectives = ("mle", "gold_s")
    targets = [f"results/smoke/scores/demo/{objective}/seed1/test/greedy/sample0.json" for objective in objectives]
    run_snakemake(tmp_path, *targets, "--cores", "2", "--configfile", str(REPO / "configs" / "smoke.yaml"))
    for objective, target in zip(objectives, targets, strict=True):
        assert json.loads((tiny_run / target).read_text()) == json.loads((tmp_path / target).read_text()), objective
        generations = f"results/smoke/generations/demo/{objective}/seed1/test/greedy/sample0.jsonl"
        assert (tiny_run / generations).read_text() == (tmp_path / generations).read_text(), objective


def test_sampling_runs_differ_and_reproduce(tiny_run, tmp_path):
    first, second = (tiny_run / f"results/smoke/generations/demo/mle/seed1/valid/topk5/sample{n}.jsonl" for n in (1, 2))
    assert first.read_text() != second.read_text()
    target = "results/smoke/generations/demo/mle/seed1/valid/topk5/sample2.jsonl"
    shutil.copytree(tiny_run / "results", tmp_path / "results", symlinks=True)
    (tmp_path / target).unlink()
    run_snakemake(tmp_path, target, "--cores", "1", "--configfile", str(REPO / "configs" / "smoke.yaml"))
    assert (tmp_path / target).read_text() == second.read_text()
