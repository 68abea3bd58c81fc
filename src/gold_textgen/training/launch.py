"""Running a training job in one process, or in several through torchrun when a rule has several GPUs.

    python -m torch.distributed.run --standalone --nproc_per_node N -m gold_textgen.training.launch SPEC.json

The rule's own process writes the job to SPEC.json and starts torchrun; each worker rebuilds the job and
runs the same training function, and the Trainer shards batches over the workers (DDP). Only the first
worker writes the model directory and checkpoints.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from ..runtime.allocator import reuse_freed_memory
from ..runtime.logs import freeze_imported_objects
from .training_job import TrainingJob

log = logging.getLogger(__name__)
# Each kind's training function, imported by name when it runs: the code identity of a training step
# (bookkeeping/code_identity.py) then holds the modules of its own kind only, so an edit to the fine-tuning
# code does not make every MLE model out of date. The rules name these modules (rules/train.smk).
TRAINING_FUNCTIONS = {"mle": ("gold_textgen.training.mle", "train_mle"), "fine_tune": ("gold_textgen.training.fine_tune", "fine_tune")}
PATH_FIELDS = ("train_path", "valid_path", "tokenizer_path", "output_dir", "checkpoint_dir", "repo_dir", "log_dir")


def job_to_spec(kind: str, job: TrainingJob, extra: dict) -> dict:
    fields = {f.name: getattr(job, f.name) for f in dataclasses.fields(job) if f.name != "callbacks"}
    for name in PATH_FIELDS:
        fields[name] = None if fields[name] is None else str(fields[name])
    return {"kind": kind, "job": fields, "extra": {k: None if v is None else str(v) for k, v in extra.items()}}


def spec_to_job(spec: dict) -> tuple[str, TrainingJob, dict]:
    fields = dict(spec["job"])
    for name in PATH_FIELDS:
        fields[name] = None if fields[name] is None else Path(fields[name])
    extra = {k: None if v is None else Path(v) for k, v in spec["extra"].items()}
    return spec["kind"], TrainingJob(**fields), extra


def train_in_process(kind: str, job: TrainingJob, extra: dict) -> dict:
    module, function = TRAINING_FUNCTIONS[kind]
    return getattr(importlib.import_module(module), function)(job, **extra)


def rule_job(rule, objective: str, tokenizer_path: Path | None = None) -> TrainingJob:
    """The job of a training rule, from the `snakemake` object its script receives (inputs train and
    valid, the model folder as its output, params task, checkpoint_dir and run_dir)."""
    return TrainingJob(
        task=rule.params.task,
        objective=objective,
        seed=int(rule.wildcards.seed),
        train_path=Path(rule.input.train),
        valid_path=Path(rule.input.valid),
        tokenizer_path=tokenizer_path,
        output_dir=Path(rule.output[0]),
        checkpoint_dir=Path(rule.params.checkpoint_dir),
        repo_dir=Path(rule.scriptdir).parent,  # provenance records its git revision
        log_dir=Path(rule.params.run_dir),
        logger=rule.config["training_logger"],  # read here, not a param: changing it retrains nothing
        code_version=rule.params.get("code"),
        run_name=f"{rule.wildcards.task}/{objective}/seed{rule.wildcards.seed}",
        run_group=rule.config["experiment"].get("extends") or rule.config["experiment"]["name"],  # the models' owner
    )


def worker_count(gpus: int) -> int:
    """Training processes for a job given `gpus` GPUs: one per GPU it can see, one on CPU."""
    return max(1, min(int(gpus), torch.cuda.device_count())) if torch.cuda.is_available() else 1


def run_training(kind: str, job: TrainingJob, processes: int = 1, **extra) -> dict | None:
    """Train `job` (`kind` mle or fine_tune; `extra` = fine_tune's start_dir and rewards_path) in this process,
    or in `processes` torchrun workers when more than one is asked for."""
    if processes <= 1:
        return train_in_process(kind, job, extra)
    # The hand-over file lives outside the checkpoint folder, which the first worker may clear.
    with tempfile.TemporaryDirectory(prefix="gold-launch-") as folder:
        spec_path = Path(folder) / f"{kind}.json"
        spec_path.write_text(json.dumps(job_to_spec(kind, job, extra), indent=1))
        command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}"]
        command += ["-m", "gold_textgen.training.launch", str(spec_path)]
        log.info("launching %d training processes: %s", processes, " ".join(command))
        sys.stdout.flush()
        # The workers write to this job's log (stdout here is the rule's log file, see logs.log_to_file).
        environment = {**os.environ, "OMP_NUM_THREADS": str(torch.get_num_threads())}
        subprocess.run(command, check=True, stdout=sys.stdout, stderr=subprocess.STDOUT, env=environment)
    return None


def main(argv: list[str] | None = None) -> None:
    freeze_imported_objects()  # a torchrun worker is a job process of its own
    reuse_freed_memory()
    spec_path = Path((argv or sys.argv[1:])[0])
    kind, job, extra = spec_to_job(json.loads(spec_path.read_text()))
    rank = int(os.environ.get("RANK", "0"))
    level = logging.INFO if rank == 0 else logging.WARNING  # one worker reports progress
    logging.basicConfig(level=level, format=f"[rank {rank}] %(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        train_in_process(kind, job, extra)
    finally:
        if torch.distributed.is_initialized():  # a worker that exits with its group alive can abort in the group's destructor
            torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
