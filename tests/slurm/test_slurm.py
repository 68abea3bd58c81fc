"""The workflow through `--profile profiles/slurm` on a real SLURM cluster (tests/slurm/start_cluster.sh:
one node, fake GPUs as GRES). Skipped when no cluster answers, unless GOLD_REQUIRE_SLURM=1 (.ci/run sets
it after starting the cluster), so a missing cluster fails CI instead of passing it silently."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

import pytest
import yaml
from conftest import REPO, run_snakemake
from driver_control import MODEL, long_mle_config, start_driver, wait_for_checkpoint, wait_until_gone, with_prepared_data
from slurm_cluster import cancel_jobs_in, cluster_profile, jobs_in, require_cluster

pytestmark = [pytest.mark.workflow, pytest.mark.slurm]


@pytest.fixture(scope="module")
def cluster():
    require_cluster()


GPU_RULES = ("train_mle", "cache_rewards", "fine_tune", "evaluate")  # as named by their log folders
CPU_RULES = ("prepare_dataset", "train_tokenizer")


def job_records(workdir: Path) -> dict[str, list[dict]]:
    """Per rule, the `job environment:` header of each of its job logs (runtime facts of the job)."""
    records: dict[str, list[dict]] = {}
    logs = workdir / "logs" / "smoke"  # the experiment's logs
    for log in sorted(logs.rglob("*.log")):
        for match in re.finditer(r"job environment: (.*)", log.read_text()):
            facts = dict(item.split("=", 1) for item in match.group(1).split())
            records.setdefault(log.relative_to(logs).parts[0], []).append(facts)
    return records


# Job arrays: the two MLE runs of a two-seed experiment are ready at the same moment (when the tokenizer
# is), and the plugin submits them as one `sbatch --array`. Their evaluations are arrayed too when both
# models end in the same scheduling round, which depends on timing, so the tests do not count on it.
# Fine-tuning, reward caching and the CPU rules go out as jobs of their own.
ARRAY_RULES = "train_mle,evaluate_test,evaluate_valid"
SLURM_TARGETS = (
    "results/smoke/models/demo/mle/seed2",
    "results/smoke/models/demo/gold_s/seed1",
    "results/smoke/scores/demo/mle/seed1/test/greedy/sample0.json",
)


@pytest.fixture(scope="module")
def slurm_run(cluster, tmp_path_factory):
    """The smoke experiment cut to MLE and GOLD-s on seeds 1 and 2 without the decoding sweep through
    SLURM, the rules above as job arrays: both MLE models (an array), GOLD-s on seed 1 and the scores of
    its MLE model (every kind of job, few jobs; the tables and figures are local rules)."""
    folder = tmp_path_factory.mktemp("slurm")
    config = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
    config["experiment"].update(objectives=["mle", "gold_s"], seeds=[1, 2], sweep_decoders=[])
    (folder / "experiment.yaml").write_text(yaml.safe_dump(config))
    workdir = folder / "run"
    try:
        profile = str(cluster_profile(folder, slurm_array_jobs=ARRAY_RULES, jobs=8))
        run_snakemake(
            workdir,
            "--profile",
            profile,
            *SLURM_TARGETS,
            "--configfile",
            str(folder / "experiment.yaml"),
            timeout=1200,
            env={"CUDA_VISIBLE_DEVICES": None},
        )
    finally:
        cancel_jobs_in(workdir)
    return workdir


def test_every_job_ran_as_a_slurm_job(slurm_run):
    records = job_records(slurm_run)
    for rule in (*GPU_RULES, *CPU_RULES):
        assert records.get(rule), f"no job log of {rule}"
        for facts in records[rule]:
            assert re.fullmatch(r"\d+", facts["slurm_job_id"]), f"{rule} did not run under SLURM: {facts}"
            expected = "gpu" if rule in GPU_RULES else "cpu"
            assert facts["slurm_partition"] == expected, f"{rule} ran in partition {facts['slurm_partition']}, not {expected}"


def test_the_jobs_are_named_with_the_profiles_prefix(slurm_run):
    """Every job of a run is named `<slurm-jobname-prefix>_<run id>`, the name the driver prints."""
    driver_logs = "".join(log.read_text() for log in (slurm_run / ".snakemake" / "log").glob("*.snakemake.log"))
    assert re.search(r"SLURM run ID: gold_[0-9a-f-]{36}", driver_logs), "the driver named no run with the profile's prefix"


def test_gpu_jobs_got_a_gpu_from_slurm_and_cpu_jobs_none(slurm_run):
    records = job_records(slurm_run)
    for rule in GPU_RULES:
        for facts in records[rule]:
            assert re.fullmatch(r"\d+(,\d+)*", facts["cuda_visible_devices"]), f"{rule} got no GPU: {facts}"
    for rule in CPU_RULES:
        for facts in records[rule]:
            assert facts["cuda_visible_devices"] == "-", f"{rule} was given a GPU: {facts}"


def test_jobs_of_a_rule_ready_together_run_as_one_slurm_array(slurm_run):
    training = job_records(slurm_run)["train_mle"]
    arrays = {facts["slurm_array_job_id"] for facts in training}
    assert len(training) == 2 and len(arrays) == 1, f"the two MLE runs were not one array: {training}"
    assert re.fullmatch(r"\d+", arrays.pop()), f"the MLE runs were not array tasks: {training}"
    assert sorted(facts["slurm_array_task_id"] for facts in training) == ["1", "2"]


def test_slurm_results_equal_a_local_run(slurm_run, tiny_run):
    """Seed 1's models and MLE's generations and scores equal the session's local smoke run's: GOLD-s,
    fine-tuned in a SLURM job of its own, and the MLE model it starts from, trained as an array task and
    scored in a job. An independent run of the same config and seed, bit for bit (in CI, where a cluster
    must answer, this stands for test_reproducibility's local rerun of the same jobs)."""
    scores = sorted(p.relative_to(slurm_run) for p in (slurm_run / "results" / "smoke" / "scores").rglob("seed1/**/*.json"))
    assert len(scores) == 1  # MLE, test set, greedy, seed 1
    for relative in scores:
        assert json.loads((slurm_run / relative).read_text()) == json.loads((tiny_run / relative).read_text())
    generations = "results/smoke/generations/demo/mle/seed1/test/greedy/sample0.jsonl"
    assert (slurm_run / generations).read_text() == (tiny_run / generations).read_text()
    for model in ("mle", "gold_s"):
        weights = f"results/smoke/models/demo/{model}/seed1/model.safetensors"
        assert (slurm_run / weights).read_bytes() == (tiny_run / weights).read_bytes()


def slurm_job_ids(workdir: Path) -> dict[str, list[str]]:
    return {rule: [facts["slurm_job_id"] for facts in records] for rule, records in job_records(workdir).items()}


@pytest.mark.slow
def test_ctrl_c_to_the_slurm_driver_cancels_its_jobs_and_a_restart_resumes_them(slurm_run, tmp_path):
    """docs/guide/running.md, "Stopping a run": Ctrl-C to a driver that submits to SLURM cancels the jobs it submitted
    (none is left running unwatched); the next run redoes only the cancelled job, from its checkpoint. It
    starts from the SLURM run's data and tokenizer (their jobs are not what it stops)."""
    config = long_mle_config(tmp_path)
    profile = str(cluster_profile(tmp_path))
    workdir = with_prepared_data(slurm_run, tmp_path / "run")
    prepared = slurm_job_ids(workdir)
    driver = start_driver(workdir, config, "--profile", profile, env={"CUDA_VISIBLE_DEVICES": ""})
    try:
        wait_for_checkpoint(driver, workdir, step=40)
        before = slurm_job_ids(workdir)
        os.killpg(driver.pid, signal.SIGINT)
        assert wait_until_gone(driver.pid, timeout=120), "the driver did not exit after Ctrl-C"
        deadline = time.monotonic() + 60
        while jobs_in(workdir) and time.monotonic() < deadline:
            time.sleep(1)
        assert not jobs_in(workdir), "Ctrl-C left SLURM jobs of the driver running"

        run_snakemake(workdir, "--profile", profile, MODEL, "--configfile", str(config), timeout=1200, env={"CUDA_VISIBLE_DEVICES": None})
    finally:
        cancel_jobs_in(workdir)
    provenance = json.loads((workdir / MODEL / "provenance.json").read_text())
    assert provenance["resumed_from"].startswith("checkpoint-") and provenance["global_step"] == 120
    after = slurm_job_ids(workdir)
    for rule in ("prepare_dataset", "train_tokenizer"):  # the SLURM run's jobs: run neither before the stop nor after
        assert after[rule] == before[rule] == prepared[rule]
    assert len(after["train_mle"]) == 1 and after["train_mle"] != before["train_mle"]  # one new job, which resumed
