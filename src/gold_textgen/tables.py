"""Tables built from score files alone: one row per run, then mean and standard deviation over seeds."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from .io_utils import atomic_open, read_json

KEYS = ("task", "objective", "split", "decoder")
METRICS = ("bleu", "rouge1", "rouge2", "rougeL", "rougeLsum", "perplexity", "token_accuracy")
OBJECTIVE_ORDER = {"mle": 0, "gold_delta": 1, "gold_p": 2, "gold_s": 3}


def load_scores(paths: Iterable[str | Path]) -> pd.DataFrame:
    rows = [read_json(path) for path in paths]
    if not rows:
        raise ValueError("no score files given")
    frame = pd.DataFrame(rows)
    missing = [c for c in (*KEYS, "seed", *METRICS) if c not in frame.columns]
    if missing:
        raise ValueError(f"score files lack {', '.join(missing)}")
    return frame


def seed_table(scores: pd.DataFrame, metrics: Sequence[str] = METRICS) -> pd.DataFrame:
    """Per-seed rows (`seed` = the seed, `n_seeds` = 1), then per group a row with `seed` = `mean` holding
    the mean over seeds and `<metric>_std` the sample standard deviation (empty for a single seed)."""
    keys = list(KEYS)
    per_seed = scores[[*keys, "seed", *metrics]].copy()
    per_seed["seed"] = per_seed["seed"].astype(str)
    per_seed["n_seeds"] = 1
    grouped = scores.groupby(keys, sort=False)[list(metrics)]
    means = grouped.mean().reset_index()
    stds = grouped.std(ddof=1).add_suffix("_std").reset_index(drop=True)
    summary = pd.concat([means, stds], axis=1)
    summary["seed"] = "mean"
    summary["n_seeds"] = grouped.size().to_numpy()
    table = pd.concat([per_seed, summary], ignore_index=True)
    # MLE first, then the GOLD objectives in the paper's order; per group the seeds, then the mean row.
    table["_objective"] = table["objective"].map(lambda o: OBJECTIVE_ORDER.get(o, len(OBJECTIVE_ORDER)))
    table["_summary"] = table["seed"].eq("mean")
    table["_seed_num"] = pd.to_numeric(table["seed"], errors="coerce")
    sort_keys = ["task", "_objective", "objective", "split", "decoder", "_summary", "_seed_num"]
    table = table.sort_values(sort_keys, kind="stable").drop(columns=["_objective", "_summary", "_seed_num"])
    columns = [*keys, "seed", "n_seeds"] + [c for m in metrics for c in (m, f"{m}_std")]
    return table.reindex(columns=columns).reset_index(drop=True)


def to_markdown(table: pd.DataFrame, metrics: Sequence[str] = METRICS, digits: int = 2, labels: Sequence[str] = (*KEYS, "seed")) -> str:
    """The table for people: `mean ± std` in the summary rows; metrics a task lacks show as `-`."""
    headers = [*labels, *metrics]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for _, row in table.iterrows():
        cells = [str(row[k]) for k in labels]
        for metric in metrics:
            value, std = row[metric], row.get(f"{metric}_std")
            text = "-" if pd.isna(value) else f"{value:.{digits}f}"
            if row["seed"] == "mean" and pd.notna(std):
                text += f" ± {std:.{digits}f}"
            cells.append(text)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_table(table: pd.DataFrame, csv_path: str | Path, markdown_path: str | Path, metrics: Sequence[str] = METRICS, **markdown) -> None:
    with atomic_open(csv_path) as handle:
        table.to_csv(handle, index=False, float_format="%.4f")
    with atomic_open(markdown_path) as handle:
        handle.write(to_markdown(table, metrics, **markdown))


# Table 1 of the paper: test BLEU for translation and question generation, ROUGE for summarization, and
# perplexity, which GOLD raises while improving the outputs.
TASK_METRIC_COLUMNS = {"bleu": ("bleu",), "rouge2": ("rouge1", "rouge2", "rougeL")}


def table1(scores: pd.DataFrame, task_metrics: dict[str, str]) -> tuple[pd.DataFrame, list[str]]:
    """Rows MLE, GOLD-delta, GOLD-p, GOLD-s per task (seeds, then mean ± std); the columns each task
    reports by its metric, then perplexity. Returns the table and its metric columns."""
    columns = [m for task in scores["task"].unique() for m in TASK_METRIC_COLUMNS[task_metrics[task]]]
    columns = [*dict.fromkeys(columns), "perplexity"]
    table = seed_table(scores, columns)
    for task, metric in task_metrics.items():
        unused = [c for c in columns if c != "perplexity" and c not in TASK_METRIC_COLUMNS[metric]]
        table.loc[table["task"] == task, unused + [f"{c}_std" for c in unused]] = float("nan")
    return table, columns
