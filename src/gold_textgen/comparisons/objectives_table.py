"""The objectives side by side (results/<experiment>/tables/objectives.csv, results/<experiment>/figures/objectives.png): per task
and objective, the task metric with its spread over seeds, perplexity, how far top-k sampling falls below
greedy decoding, and distinct n-grams; and a figure of the metric against perplexity with seed error bars.

Every objective fine-tunes the same MLE models on the same schedule and is decoded and scored by the same
jobs, so the rows differ by the objective alone.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from ..analysis import objective_names
from ..analysis.figures import save, shared_legend
from ..analysis.markdown import markdown_table
from ..analysis.tables import average_sample_runs
from ..analysis.training_marks import COLUMN, KEPT_FIRST
from ..runtime.files import write_csv, write_text
from .significance import BASELINES
from .significance_report import significance_columns

DISTINCT_ORDER = 2
SAMPLER = "topk20"


def first_decoder_scores(scores: pd.DataFrame, task: str) -> pd.DataFrame:
    """The task's scores with the experiment's first decoder (the first one its score files list)."""
    scores = scores[scores["task"] == task]
    return scores[scores["decoder"] == scores["decoder"].iloc[0]]


def seed_statistics(scores: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per task and objective: mean and sample std over seeds of `metric` (sampling runs averaged first)."""
    runs = average_sample_runs(scores, [metric])
    grouped = runs.groupby(["task", "objective"], sort=False)[metric]
    return pd.DataFrame({"mean": grouped.mean(), "std": grouped.std(ddof=1), "n_seeds": grouped.size()})


def objectives_table(
    test_scores: pd.DataFrame,
    sweep_scores: pd.DataFrame | None,
    diversity: dict[str, pd.DataFrame],
    task_metrics: dict[str, str],
) -> pd.DataFrame:
    """One row per task and objective. `test_scores`: the evaluation split with the experiment's first
    decoder; `sweep_scores`: the sweep split (for greedy -> top-k 20; None or without those decoders leaves
    the column empty); `diversity`: each task's diversity table (distinct n-grams per run)."""
    rows = []
    for task, metric in task_metrics.items():
        scores = first_decoder_scores(test_scores, task)
        first_decoder = scores["decoder"].iloc[0]
        quality = seed_statistics(scores, metric)
        perplexity = seed_statistics(scores, "perplexity")
        unk_rate = scores.groupby("objective")["unk_rate"].mean() if "unk_rate" in scores else pd.Series(dtype=float)
        drops = _sampling_drop(sweep_scores, task, metric)
        distinct = _distinct(diversity.get(task))
        for (_, objective), row in quality.iterrows():
            rows.append(
                {
                    "task": task,
                    "objective": objective,
                    "label": objective_names.label(objective),
                    "role": objective_names.role(objective),
                    "metric": metric,
                    "decoder": first_decoder,
                    "n_seeds": int(row["n_seeds"]),
                    "mean": row["mean"],
                    "seed_std": row["std"],
                    "perplexity": perplexity.loc[(task, objective), "mean"],
                    "perplexity_std": perplexity.loc[(task, objective), "std"],
                    "unk_rate": unk_rate.get(objective, float("nan")),
                    f"greedy_to_{SAMPLER}_drop": drops.get(objective, float("nan")),
                    f"distinct_{DISTINCT_ORDER}": distinct.get(objective, float("nan")),
                }
            )
    table = pd.DataFrame(rows)
    table["_rank"] = table["objective"].map(objective_names.rank)
    return table.sort_values(["task", "_rank"], kind="stable").drop(columns="_rank").reset_index(drop=True)


def _sampling_drop(sweep: pd.DataFrame | None, task: str, metric: str) -> dict[str, float]:
    """Per objective: greedy's metric minus top-k 20's, each averaged over runs and seeds (dev split)."""
    if sweep is None or not {"greedy", SAMPLER} <= set(sweep.loc[sweep["task"] == task, "decoder"]):
        return {}
    runs = average_sample_runs(sweep[(sweep["task"] == task) & sweep["decoder"].isin(["greedy", SAMPLER])], [metric])
    means = runs.groupby(["objective", "decoder"])[metric].mean().unstack()
    return (means["greedy"] - means[SAMPLER]).to_dict()


def _distinct(diversity: pd.DataFrame | None) -> dict[str, float]:
    """Per objective: distinct n-grams of its outputs, averaged over seeds and runs."""
    if diversity is None:
        return {}
    runs = diversity[diversity["system"] != "reference"]
    return runs.groupby("objective")[f"distinct_{DISTINCT_ORDER}"].mean().to_dict()


def to_markdown(table: pd.DataFrame) -> str:
    drop, distinct = f"greedy_to_{SAMPLER}_drop", f"distinct_{DISTINCT_ORDER}"
    headers = [
        "task",
        "objective",
        "metric (test)",
        "perplexity",
        "unk %",
        f"greedy -> {SAMPLER} (dev)",
        f"distinct-{DISTINCT_ORDER}",
        "seeds",
    ]
    compared = significance_columns(table)
    headers += [f"vs {BASELINES[column.removeprefix('vs_')]}" for column in compared]
    for mark, header in ((COLUMN, "MLE unconverged (seeds)"), (KEPT_FIRST, "first model kept (seeds)")):
        if mark in table.columns and table[mark].astype(bool).any():
            compared, headers = [*compared, mark], [*headers, header]
    rows = [
        [
            row["task"],
            row["label"],
            f"{row['metric']} {_with_spread(row['mean'], row['seed_std'])}",
            _with_spread(row["perplexity"], row["perplexity_std"]),
            "-" if pd.isna(row["unk_rate"]) else f"{row['unk_rate']:.2f}",
            "-" if pd.isna(row[drop]) else f"{row[drop]:.2f}",
            "-" if pd.isna(row[distinct]) else f"{row[distinct]:.0f}",
            str(row["n_seeds"]),
            *("-" if pd.isna(row[column]) else row[column] for column in compared),
        ]
        for _, row in table.iterrows()
    ]
    return markdown_table(headers, rows)


def _with_spread(mean: float, std: float) -> str:
    return f"{mean:.2f}" if pd.isna(std) else f"{mean:.2f} ± {std:.2f}"


def objectives_figure(table: pd.DataFrame, path: str | Path) -> None:
    """Task metric against perplexity, one point per objective with seed-std error bars, a panel per task."""
    tasks = list(dict.fromkeys(table["task"]))
    figure = Figure(figsize=(5.2 * len(tasks), 4.2))
    axes = figure.subplots(1, len(tasks), squeeze=False)[0]
    for axis, task in zip(axes, tasks, strict=True):
        rows = table[table["task"] == task]
        for index, (_, row) in enumerate(rows.iterrows()):
            axis.errorbar(
                row["perplexity"],
                row["mean"],
                xerr=0.0 if pd.isna(row["perplexity_std"]) else row["perplexity_std"],
                yerr=0.0 if pd.isna(row["seed_std"]) else row["seed_std"],
                fmt="o",
                capsize=3,
                color=objective_names.color(row["objective"], index),
                label=row["label"],
            )
        axis.set(
            title=task, xlabel="perplexity of the references (test)", ylabel=f"{rows['metric'].iloc[0]} ({rows['decoder'].iloc[0]}, test)"
        )
        axis.grid(alpha=0.3)
    shared_legend(figure, axes[0])
    save(figure, path)


def smoothing_note(smoothing: dict[str, dict[str, float]]) -> str:
    """Which label smoothing each objective trained with (its reference's own, or the task's), per task."""
    parts = []
    for task, values in smoothing.items():
        groups: dict[float, list[str]] = {}
        for objective, epsilon in values.items():
            groups.setdefault(epsilon, []).append(objective_names.label(objective))
        listed = "; ".join(f"{epsilon:g}: {', '.join(names)}" for epsilon, names in sorted(groups.items(), reverse=True))
        parts.append(f"{task}: {listed}" if len(smoothing) > 1 else listed)
    return f"Label smoothing epsilon per objective (each loss's reference's own where it has one, else the task's): {' | '.join(parts)}.\n"


def write_objectives(table: pd.DataFrame, csv_path: str | Path, markdown_path: str | Path, figure_path: str | Path, note: str = "") -> None:
    write_csv(csv_path, table, float_format="%.4f")
    write_text(markdown_path, to_markdown(table) + (f"\n{note}\n" if note else ""))
    objectives_figure(table, figure_path)
