"""What the driver checks before it submits anything to a cluster."""

from __future__ import annotations

import shutil

# What snakemake-executor-plugin-slurm calls: submit, poll (profiles/slurm polls with squeue; sacct is
# the plugin's fallback), cancel.
SLURM_COMMANDS = ("sbatch", "squeue", "scancel")


def missing_slurm_commands() -> list[str]:
    return [command for command in SLURM_COMMANDS if shutil.which(command) is None]


def slurm_client_problem(executor: str | None) -> str | None:
    """Why the SLURM executor cannot work on this host (its client commands are not on PATH), or None."""
    if executor != "slurm":
        return None
    missing = missing_slurm_commands()
    if not missing:
        return None
    return (
        f"the SLURM profile needs SLURM's client commands, and {', '.join(missing)} "
        f"{'is' if len(missing) == 1 else 'are'} not on PATH on this host: run the driver on the cluster's "
        "login node (or load its slurm module), or run locally with `--cores N` or `--profile profiles/local`"
    )
