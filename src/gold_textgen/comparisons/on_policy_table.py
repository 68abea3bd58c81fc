"""The paper's Table 4 (on-policy fine-tuning): per task, MLE, each on-policy objective's starting model
and the on-policy objective itself, with the task metric on the test split and delta, the model's metric
minus its task's MLE model's (means over seeds; the paper: NQG BLEU and CNN/DM ROUGE-2)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..analysis import objective_names
from ..analysis.markdown import markdown_table
from ..runtime.files import write_csv, write_text
from .objectives_table import first_decoder_scores, seed_statistics


def table4(
    test_scores: pd.DataFrame,
    task_metrics: dict[str, str],
    task_starts: dict[str, dict[str, str]],
    task_reward_metrics: dict[str, dict[str, str | None]],
) -> pd.DataFrame:
    """Per task, `task_starts` maps each on-policy objective to the objective it starts from (`mle` for
    MLE+PG) and `task_reward_metrics` to its reward metric (None: the task metric)."""
    rows = []
    for task, metric in task_metrics.items():
        starts, reward_metrics = task_starts[task], task_reward_metrics[task]
        if not starts:  # a task trained without on-policy objectives (the paper's Table 4 has its standard models only)
            continue
        shown = list(dict.fromkeys(["mle", *starts.values(), *starts]))
        stats = seed_statistics(first_decoder_scores(test_scores, task), metric).loc[task]
        mle = stats.loc["mle", "mean"] if "mle" in stats.index else float("nan")
        for objective in shown:
            if objective not in stats.index:
                continue
            rows.append(
                {
                    "task": task,
                    "objective": objective,
                    "label": objective_names.label(objective),
                    "starts_from": starts.get(objective, ""),
                    "reward": (reward_metrics.get(objective) or metric) if objective in starts else "",
                    "metric": metric,
                    "mean": stats.loc[objective, "mean"],
                    "seed_std": stats.loc[objective, "std"],
                    "delta": stats.loc[objective, "mean"] - mle,
                    "n_seeds": int(stats.loc[objective, "n_seeds"]),
                }
            )
    return pd.DataFrame(rows)


def to_markdown(table: pd.DataFrame) -> str:
    headers = ["task", "model", "starts from", "reward", "metric (test)", "delta vs MLE", "seeds"]
    rows = [
        [
            row["task"],
            row["label"],
            objective_names.label(row["starts_from"]) if row["starts_from"] else "",
            row["reward"],
            f"{row['metric']} {row['mean']:.2f}" + ("" if pd.isna(row["seed_std"]) else f" ± {row['seed_std']:.2f}"),
            f"{row['delta']:+.2f}",
            str(row["n_seeds"]),
        ]
        for _, row in table.iterrows()
    ]
    return markdown_table(headers, rows)


def write_table4(table: pd.DataFrame, csv_path: str | Path, markdown_path: str | Path, note: str = "") -> None:
    write_csv(csv_path, table, float_format="%.4f")
    write_text(markdown_path, to_markdown(table) + (f"\n{note}\n" if note else ""))
