"""Runs reproduce: the same config and seed give the same numbers in an independent run, and sampled
decodings differ between samples yet reproduce one by one."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from conftest import REPO, run_snakemake

pytestmark = pytest.mark.workflow


@pytest.mark.skipif(
    os.environ.get("GOLD_REQUIRE_SLURM") == "1",
    reason="the SLURM test reruns the same jobs independently and compares the same outputs (tests/slurm/test_slurm.py)",
)
def test_same_config_and_seed_reproduce_identical_scores(tiny_run, tmp_path):
    """A second, independent run of the same config and seed on CPU gives the very same numbers: MLE's
    test scores and generations, and the weights of MLE and of GOLD-s fine-tuned from it (its rewards,
    lagged policy and updates; decoding a model twice is test_sampling_runs_differ_and_reproduce)."""
    scores = "results/smoke/scores/demo/mle/seed1/test/greedy/sample0.json"
    gold_s = "results/smoke/models/demo/gold_s/seed1"
    run_snakemake(tmp_path, scores, gold_s, "--cores", "2", "--configfile", str(REPO / "configs" / "smoke.yaml"))
    assert json.loads((tiny_run / scores).read_text()) == json.loads((tmp_path / scores).read_text())
    generations = "results/smoke/generations/demo/mle/seed1/test/greedy/sample0.jsonl"
    assert (tiny_run / generations).read_text() == (tmp_path / generations).read_text()
    for model in ("results/smoke/models/demo/mle/seed1", gold_s):
        weights = f"{model}/model.safetensors"
        assert (tiny_run / weights).read_bytes() == (tmp_path / weights).read_bytes(), model


def test_sampling_runs_differ_and_reproduce(tiny_run, tmp_path):
    first, second = (tiny_run / f"results/smoke/generations/demo/mle/seed1/valid/topk5/sample{n}.jsonl" for n in (1, 2))
    assert first.read_text() != second.read_text()
    target = "results/smoke/generations/demo/mle/seed1/valid/topk5/sample2.jsonl"
    shutil.copytree(tiny_run / "results", tmp_path / "results", symlinks=True)
    (tmp_path / target).unlink()
    run_snakemake(tmp_path, target, "--cores", "1", "--configfile", str(REPO / "configs" / "smoke.yaml"))
    assert (tmp_path / target).read_text() == second.read_text()
