"""The header of every job log: where the job ran, as the scheduler describes it."""

from gold_textgen.runtime.logs import job_environment, slurm_partition


def test_outside_slurm_every_scheduler_fact_is_a_dash(monkeypatch):
    for name in ("SLURM_JOB_ID", "SLURM_JOB_PARTITION", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID"):
        monkeypatch.delenv(name, raising=False)
    facts = dict(item.split("=", 1) for item in job_environment().split())
    assert [facts[key] for key in ("slurm_job_id", "slurm_partition", "slurm_array_job_id", "slurm_array_task_id")] == ["-"] * 4


def test_a_job_without_its_partition_in_the_environment_asks_scontrol(monkeypatch, tmp_path):
    """scontrol here is a stand-in that prints what `scontrol show job --oneliner 42` prints on a cluster."""
    scontrol = tmp_path / "scontrol"
    scontrol.write_text('#!/bin/sh\n[ "$4" = 42 ] && echo "JobId=42 ArrayJobId=41 ArrayTaskId=1 JobName=gold_x Partition=gpu"\n')
    scontrol.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    monkeypatch.delenv("SLURM_JOB_PARTITION", raising=False)
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    assert slurm_partition() == "gpu"
    monkeypatch.setenv("SLURM_JOB_ID", "7")  # a job scontrol does not know (any more)
    assert slurm_partition() == "-"
    monkeypatch.setenv("SLURM_JOB_PARTITION", "cpu")  # the environment, where SLURM sets it, wins
    assert slurm_partition() == "cpu"
