"""Rows a reader must not take at face value, marked in every table from the runs' training summaries
(rule training_curves, workflow.convergence.run_summary):

* `mle_unconverged`: rows built on an MLE model that had not converged (its step cap stopped it while it
  still improved, or it kept its first evaluation's model), allowed only with
  `experiment.allow_unconverged_mle: true`; a fine-tuned model's gain over such an MLE is partly the
  training MLE had left to do;
* `kept_first_model`: a fine-tuning run that kept its first evaluation's model though it trained on (no
  later dev evaluation beat it): the row shows what a few updates made, not what the objective trains;
* `imported`: a model trained elsewhere and evaluated here (`tasks.<task>.imported_models`, which the
  rules pass beside the summaries): under an objective's name it is not that objective's run.

On a seed's row `yes`; on a row over seeds (`seed` = mean, or a table without seeds) the seeds concerned
(`imported`: `yes` on every row of the model)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

COLUMN = "mle_unconverged"
KEPT_FIRST = "kept_first_model"
IMPORTED = "imported"


@dataclass(frozen=True)
class Marks:
    mle_unconverged: dict[str, list[int]] = field(default_factory=dict)  # task -> seeds
    kept_first: dict[str, dict[str, list[int]]] = field(default_factory=dict)  # task -> objective -> seeds
    imported: dict[str, list[str]] = field(default_factory=dict)  # task -> imported models' names

    @property
    def columns(self) -> list[str]:
        """The mark columns with an entry (the tables show only these)."""
        found = ((COLUMN, self.mle_unconverged), (KEPT_FIRST, self.kept_first), (IMPORTED, self.imported))
        return [name for name, entries in found if entries]


def training_marks(summaries: Mapping[str, str | Path], imported: Mapping[str, Iterable[str]] | None = None) -> Marks:
    """Per task (its training summary), the seeds whose MLE had not converged and the fine-tuning runs that
    kept their first evaluation's model, and (`imported`, per task) the imported models; tasks without any
    are left out."""
    unconverged, kept_first = {}, {}
    for task, path in summaries.items():
        summary = pd.read_csv(path)
        not_converged = ~summary["converged"].astype(bool) if "converged" in summary else summary["still_improving"].astype(bool)
        flagged = summary[(summary["objective"] == "mle") & not_converged]
        if len(flagged):
            unconverged[task] = sorted(int(seed) for seed in flagged["seed"])
        if "kept_first" in summary:
            runs = summary[(summary["objective"] != "mle") & summary["kept_first"].astype(bool)]
            for objective, rows in runs.groupby("objective"):
                kept_first.setdefault(task, {})[str(objective)] = sorted(int(seed) for seed in rows["seed"])
    named = {task: sorted(names) for task, names in (imported or {}).items() if names}
    return Marks(unconverged, kept_first, named)


def _seed_list(seeds: Iterable) -> str:
    return ", ".join(str(seed) for seed in seeds)


def _marked(table: pd.DataFrame, seeds_of) -> list[str]:
    """Per row: `yes` on a seed's row among `seeds_of(row)`, the seeds on a row over seeds."""
    cells = []
    for _, row in table.iterrows():
        seeds = seeds_of(row)
        seed = str(row["seed"]) if "seed" in table.columns else "mean"
        cells.append(_seed_list(seeds) if seed == "mean" else ("yes" if seed.isdigit() and int(seed) in seeds else ""))
    return cells


def with_training_marks(table: pd.DataFrame, marks: Marks) -> pd.DataFrame:
    """`table` with the `mle_unconverged` column and, where it has objectives, `kept_first_model`."""
    table = table.copy()
    table[COLUMN] = _marked(table, lambda row: marks.mle_unconverged.get(row["task"], []))
    if "objective" in table.columns:
        table[KEPT_FIRST] = _marked(table, lambda row: marks.kept_first.get(row["task"], {}).get(row["objective"], []))
        if marks.imported:
            table[IMPORTED] = ["yes" if row["objective"] in marks.imported.get(row["task"], []) else "" for _, row in table.iterrows()]
    return table


def note(marks: Marks) -> str:
    """The footnotes naming the tasks and seeds concerned (empty when none)."""
    text = ""
    if marks.mle_unconverged:
        runs = "; ".join(f"{task}: seed {_seed_list(found)}" for task, found in marks.mle_unconverged.items())
        text += (
            f"\nUnconverged MLE (column `{COLUMN}`): the MLE run was still improving when its step cap stopped it, or its dev "
            f"metric never improved ({runs}); "
            "experiment.allow_unconverged_mle let fine-tuning start from it, so a gain over MLE in these rows is partly "
            "training MLE had left to do (compare with the control, mle_continued).\n"
        )
    if marks.kept_first:
        found = [(task, objective, seeds) for task, by_objective in marks.kept_first.items() for objective, seeds in by_objective.items()]
        runs = "; ".join(f"{task} {objective}: seed {_seed_list(seeds)}" for task, objective, seeds in found)
        text += (
            f"\nFirst model kept (column `{KEPT_FIRST}`): no later dev evaluation beat the first, so the run kept the model of its "
            f"first evaluation ({runs}): these rows show a few updates of the objective, not what it trains. A dev metric that "
            "does not move calls for an equal fixed budget (fine_tune.keep: last).\n"
        )
    if marks.imported:
        models = "; ".join(f"{task}: {', '.join(names)}" for task, names in marks.imported.items())
        text += (
            f"\nImported (column `{IMPORTED}`): models trained elsewhere and evaluated here ({models}); a row under an "
            "objective's name is the imported checkpoint, not that objective trained by this workflow.\n"
        )
    return text
