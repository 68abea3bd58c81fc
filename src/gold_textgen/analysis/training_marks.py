"""Rows built on an MLE model that had not converged: its step cap stopped it while it still improved, or
its dev metric never improved (allowed only with
`experiment.allow_unconverged_mle: true`): every table marks them in a column, `mle_unconverged`, and a
footnote, since a fine-tuned model's gain over such an MLE is partly the training MLE had left to do."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

COLUMN = "mle_unconverged"


def unconverged_seeds(summaries: Mapping[str, str | Path]) -> dict[str, list[int]]:
    """Per task (its training summary: rule training_curves), the seeds whose MLE run had not converged
    (workflow.convergence.run_summary); tasks without any are left out."""
    seeds = {}
    for task, path in summaries.items():
        summary = pd.read_csv(path)
        unconverged = ~summary["converged"].astype(bool) if "converged" in summary else summary["still_improving"].astype(bool)
        flagged = summary[(summary["objective"] == "mle") & unconverged]
        if len(flagged):
            seeds[task] = sorted(int(seed) for seed in flagged["seed"])
    return seeds


def _seed_list(seeds: Iterable) -> str:
    return ", ".join(str(seed) for seed in seeds)


def with_unconverged_marks(table: pd.DataFrame, seeds: Mapping[str, list[int]]) -> pd.DataFrame:
    """`table` with the `mle_unconverged` column: on a seed's row `yes` when that seed's MLE was still
    improving, on a row over several seeds (`seed` = mean, or no seed column) the seeds it was for."""
    table = table.copy()
    if "seed" in table.columns:
        table[COLUMN] = [
            _seed_list(seeds.get(task, []))
            if str(seed) == "mean"
            else ("yes" if str(seed).isdigit() and int(seed) in seeds.get(task, []) else "")
            for task, seed in zip(table["task"], table["seed"], strict=True)
        ]
    else:
        table[COLUMN] = [_seed_list(seeds.get(task, [])) for task in table["task"]]
    return table


def note(seeds: Mapping[str, list[int]]) -> str:
    """The footnote naming the tasks and seeds whose MLE was still improving (empty when none)."""
    if not seeds:
        return ""
    runs = "; ".join(f"{task}: seed {_seed_list(found)}" for task, found in seeds.items())
    return (
        f"\nUnconverged MLE (column `{COLUMN}`): the MLE run was still improving when its step cap stopped it, or its dev "
        f"metric never improved ({runs}); "
        "experiment.allow_unconverged_mle let fine-tuning start from it, so a gain over MLE in these rows is partly "
        "training MLE had left to do (compare with the control, mle_continued).\n"
    )
