"""Per-job logs: everything a workflow step prints goes to its rule's log file, headed by where it ran.

Kept free of heavy imports: light steps (scoring, tables, figures) start in a fraction of a second.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from .errors import ConfigError, StepError
from .output_records import record_outputs, refuse_changed_inputs
from .warm_start import started_warm


@contextlib.contextmanager
def log_to_file(path: str | os.PathLike | None) -> Iterator[None]:
    """Send stdout, stderr, Python logging and transformers' logging (progress bars included) to `path`.

    Snakemake's `script:` runs in its own process without redirecting output, so without this a rule's
    progress would land on the driver's terminal instead of `logs/<experiment>/{rule}/...log`.

    Every workflow step enters here once its imports are done, so this is also where the step's imported
    objects leave the garbage collector's reach (see `freeze_imported_objects`).
    """
    freeze_imported_objects()
    job = running_job()
    if path is None:
        with checked_files(job):
            yield
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", buffering=1, encoding="utf-8") as handle:
        old_out, old_err = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = handle
        handler = logging.StreamHandler(handle)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root = logging.getLogger()
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        if "transformers" in sys.modules:  # steps that run a model: their progress and warnings too
            transformers = sys.modules["transformers"]
            transformers.logging.set_verbosity_info()
            transformers.logging.disable_default_handler()
            transformers.logging.enable_propagation()
        logging.getLogger("gold_textgen").info("job environment: %s", job_environment())
        try:
            with checked_files(job):
                yield
        except (StepError, ConfigError) as error:  # a reason, not a bug: the message is the log's last line, no traceback
            logging.getLogger("gold_textgen").error("step stopped: %s", error)
            # and the job's own stderr's, which the driver's terminal shows beside Snakemake's "check log file(s)"
            print(f"step stopped: {error} (log: {path})", file=old_err, flush=True)
            raise SystemExit(1) from None
        except BaseException:
            logging.getLogger("gold_textgen").exception("step failed")
            raise
        finally:
            root.removeHandler(handler)
            sys.stdout, sys.stderr = old_out, old_err


def running_job():
    """The Snakemake job this process runs a script of (the `snakemake` object its preamble defines in
    `__main__`), or None outside a workflow job."""
    job = getattr(sys.modules.get("__main__"), "snakemake", None)
    return job if hasattr(job, "input") and hasattr(job, "output") else None


@contextlib.contextmanager
def checked_files(job) -> Iterator[None]:
    """A job's inputs checked against what wrote them before it reads any, and its outputs recorded once it
    succeeded (output_records.py)."""
    if job is None:
        yield
        return
    refuse_changed_inputs(list(job.input))
    yield
    record_outputs(list(job.output))


def freeze_imported_objects() -> None:
    """Move every object alive now (those of the imports: torch and transformers make hundreds of
    thousands) out of the cyclic garbage collector's reach. They live as long as the process, yet each
    full collection walks them, the last one at exit included: that last walk alone took about 2 s of a
    model step's 12 on a 2-core machine. Objects created later are collected as usual."""
    gc.freeze()


def job_environment() -> str:
    """Where a job ran: host, process (a fork of the warm-start server or one of its own), the scheduler's job
    id and the GPUs it was given (`-` when unset), so a job log shows whether SLURM ran it and with which devices."""
    facts = {
        "host": os.uname().nodename,
        "pid": os.getpid(),
        "start": "warm" if started_warm() else "cold",
        "slurm_job_id": os.environ.get("SLURM_JOB_ID", "-"),
        "slurm_partition": slurm_partition(),
        "slurm_array_job_id": os.environ.get("SLURM_ARRAY_JOB_ID", "-"),  # one id for every task of an array
        "slurm_array_task_id": os.environ.get("SLURM_ARRAY_TASK_ID", "-"),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", "-"),
        "cuda_available": sys.modules["torch"].cuda.is_available() if "torch" in sys.modules else "-",
    }
    return " ".join(f"{key}={value}" for key, value in facts.items())


def slurm_partition() -> str:
    """The job's SLURM partition (`-` outside SLURM). SLURM_JOB_PARTITION was missing from the environment of
    some array tasks the executor plugin submitted (SLURM 22.05: tasks split off the array with a job id of
    their own), so a job without it asks scontrol."""
    if "SLURM_JOB_PARTITION" in os.environ or "SLURM_JOB_ID" not in os.environ:
        return os.environ.get("SLURM_JOB_PARTITION", "-")
    try:
        command = ["scontrol", "show", "job", "--oneliner", os.environ["SLURM_JOB_ID"]]
        shown = subprocess.run(command, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "-"
    found = re.search(r"\bPartition=(\S+)", shown.stdout)
    return found.group(1) if found else "-"
