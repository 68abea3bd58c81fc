"""Tables built from score files alone: one row per run, then mean and standard deviation over seeds.

A sampling decoder runs several times per model (sample seeds); its runs are first averaged per training
seed, so "mean ± std" is always over training seeds, and the run-to-run spread is reported beside it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from ..runtime.files import read_json, write_csv, write_text
from . import objective_names
from .markdown import markdown_table

KEYS = ("task", "objective", "split", "decoder")
SCORING_COLUMNS = ("bleu_signature", "chrf_signature", "chrf_pp_signature", "ter_signature", "rouge_variant")
# `unk_rate` (percent of reference tokens that are <unk>) sits beside perplexity, which it flatters.
METRICS = (
    "bleu",
    "chrf",
    "chrf_pp",
    "ter",
    "rouge1",
    "rouge2",
    "rougeL",
    "rougeLsum",
    "exact_match",
    "perplexity",
    "unk_rate",
    "token_accuracy",
)
# chrF++ and TER: tasks scored by BLEU only; the answer metrics: absent from older score files
OPTIONAL_METRICS = ("strict_match", "flexible_extract", "exact_match", "chrf_pp", "ter")


def load_scores(paths: Iterable[str | Path]) -> pd.DataFrame:
    """One row per score file (per model and decoding run)."""
    rows = [read_json(path) for path in paths]
    if not rows:
        raise ValueError("no score files given")
    frame = pd.DataFrame(rows)
    for column in OPTIONAL_METRICS:  # scored for tasks that report it; absent from older score files
        if column not in frame.columns:
            frame[column] = float("nan")
    missing = [c for c in (*KEYS, "seed", *METRICS) if c not in frame.columns]
    if missing:
        raise ValueError(f"score files lack {', '.join(missing)}")
    if "sample" not in frame.columns:
        frame["sample"] = 0
    return frame


def present_metrics(scores: pd.DataFrame, metrics: Sequence[str]) -> list[str]:
    """`metrics` without the optional ones that `scores` lacks (hand-made or older score rows)."""
    return [m for m in metrics if m in scores.columns or m not in OPTIONAL_METRICS]


def average_sample_runs(scores: pd.DataFrame, metrics: Sequence[str] = METRICS) -> pd.DataFrame:
    """One row per model and decoder: the mean over its sampling runs, `n_samples`, and `<metric>_run_std`
    (the sample standard deviation over runs; empty for a single run)."""
    metrics = present_metrics(scores, metrics)
    grouped = scores.groupby([*KEYS, "seed"], sort=False)[metrics]
    means = grouped.mean()
    stds = grouped.std(ddof=1).add_suffix("_run_std")
    frame = pd.concat([means, stds], axis=1)
    frame["n_samples"] = grouped.size()
    return frame.reset_index()


def seed_table(scores: pd.DataFrame, metrics: Sequence[str] = METRICS) -> pd.DataFrame:
    """Per-seed rows (`seed` = the seed, `n_seeds` = 1), then per group a row with `seed` = `mean` holding
    the mean over seeds and `<metric>_std` the sample standard deviation (empty for a single seed); `role`
    marks the baseline (MLE) and the control (MLE continued) rows."""
    keys = list(KEYS)
    metrics = present_metrics(scores, metrics)
    scores = average_sample_runs(scores, metrics)
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
    table["_objective"] = table["objective"].map(objective_names.rank)
    table["_summary"] = table["seed"].eq("mean")
    table["_seed_num"] = pd.to_numeric(table["seed"], errors="coerce")
    sort_keys = ["task", "_objective", "objective", "split", "decoder", "_summary", "_seed_num"]
    table = table.sort_values(sort_keys, kind="stable").drop(columns=["_objective", "_summary", "_seed_num"])
    table["role"] = table["objective"].map(objective_names.role)
    columns = [keys[0], keys[1], "role", *keys[2:], "seed", "n_seeds"] + [c for m in metrics for c in (m, f"{m}_std")]
    return table.reindex(columns=columns).reset_index(drop=True)


def to_markdown(
    table: pd.DataFrame,
    metrics: Sequence[str] = METRICS,
    digits: int = 2,
    labels: Sequence[str] = (*KEYS, "seed"),
    text_columns: Sequence[str] = (),
) -> str:
    """The table for people: `mean ± std` in the summary rows; metrics a task lacks show as `-`; then
    `text_columns` as they are (the significance cells), `-` where empty."""
    rows = []
    for _, row in table.iterrows():
        cells = [str(row[k]) for k in labels]
        for metric in metrics:
            value, std = row[metric], row.get(f"{metric}_std")
            text = "-" if pd.isna(value) else f"{value:.{digits}f}"
            if row["seed"] == "mean" and pd.notna(std):
                text += f" ± {std:.{digits}f}"
            cells.append(text)
        cells += ["-" if pd.isna(row[column]) else str(row[column]) for column in text_columns]
        rows.append(cells)
    return markdown_table([*labels, *metrics, *text_columns], rows)


# The paper's layout: its standard (recurrent) models in Tables 1 and 2, then the transformers of Table 3;
# decoder-only language models, which the paper did not train, after them.
FAMILY_ORDER = {"recurrent": 0, "transformer": 1, "causal": 2}


def with_families(table: pd.DataFrame, families: dict[str, str]) -> pd.DataFrame:
    """`table` with each task's model family (`recurrent`, `transformer` or `causal`) as a column after `task`, the
    recurrent tasks' rows first (the order within each family kept)."""
    table = table.copy()
    table.insert(table.columns.get_loc("task") + 1, "family", table["task"].map(families))
    rank = table["family"].map(FAMILY_ORDER).fillna(len(FAMILY_ORDER))
    return table.iloc[rank.argsort(kind="stable")].reset_index(drop=True)


def scoring_of_tasks(scores: pd.DataFrame) -> pd.DataFrame:
    """Per task, how its numbers were scored: the sacrebleu signature of its BLEU and its ROUGE variant
    (see metrics.Scoring); several values of one task (score files of different settings) are all listed."""
    # A column absent from every score file is all-NaN float: text first, so that it may hold "unrecorded".
    frame = scores.reindex(columns=["task", *SCORING_COLUMNS]).astype(object).fillna("unrecorded")
    return frame.groupby("task", sort=False).agg(lambda values: "; ".join(dict.fromkeys(values))).reset_index()


def with_scoring(table: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """`table` with its task's scoring columns appended to every row."""
    return table.merge(scoring_of_tasks(scores), on="task", how="left")


def scoring_note(scores: pd.DataFrame) -> str:
    """A markdown footer naming, per task, the BLEU signature and ROUGE variant behind the numbers."""
    lines = []
    for row in scoring_of_tasks(scores).itertuples():
        line = f"- {row.task}: BLEU `{row.bleu_signature}`; chrF `{row.chrf_signature}`"
        for label, signature in (("chrF++", row.chrf_pp_signature), ("TER", row.ter_signature)):
            if signature != "unrecorded":
                line += f"; {label} `{signature}`"
        lines.append(line + f"; ROUGE `{row.rouge_variant}`")
    return "\nScoring (see docs/guide/results.md, Metrics):\n\n" + "\n".join(lines) + "\n"


def write_table(
    table: pd.DataFrame, csv_path: str | Path, markdown_path: str | Path, metrics: Sequence[str] = METRICS, note: str = "", **markdown
) -> None:
    write_csv(csv_path, table, float_format="%.4f")
    write_text(markdown_path, to_markdown(table, metrics, **markdown) + note)


# Table 1 of the paper: test BLEU for translation and question generation, ROUGE for summarization, and
# perplexity, which GOLD raises while improving the outputs (with the <unk> share of the references beside it).
# Summarisation reports summary-level ROUGE-L (ROUGE-Lsum, sentences at newlines), as files2rouge does for the paper.
ANSWER_COLUMNS = ("strict_match", "flexible_extract", "exact_match")  # lm-eval's two GSM8K scores, then by value
TASK_METRIC_COLUMNS = {"bleu": ("bleu",), "rouge2": ("rouge1", "rouge2", "rougeLsum"), **dict.fromkeys(ANSWER_COLUMNS, ANSWER_COLUMNS)}
TOKEN_COLUMNS = ("perplexity", "unk_rate")


def table1(scores: pd.DataFrame, task_metrics: dict[str, str]) -> tuple[pd.DataFrame, list[str]]:
    """Rows MLE, GOLD-delta, GOLD-p, GOLD-s per task (seeds, then mean ± std); the columns each task
    reports by its metric, then perplexity and the <unk> share. Returns the table and its metric columns."""
    columns = [m for task in scores["task"].unique() for m in TASK_METRIC_COLUMNS[task_metrics[task]]]
    columns = [*dict.fromkeys(columns), *TOKEN_COLUMNS]
    table = seed_table(scores, columns)
    for task, metric in task_metrics.items():
        unused = [c for c in columns if c not in TOKEN_COLUMNS and c not in TASK_METRIC_COLUMNS[metric]]
        table.loc[table["task"] == task, unused + [f"{c}_std" for c in unused]] = float("nan")
    return table, columns


def table1_labels(table: pd.DataFrame) -> tuple[str, ...]:
    """The row labels of Table 1's markdown: the model family where the table has one, and the decoder too
    when the table holds several, so that no two rows look alike."""
    family = ("family",) if "family" in table.columns else ()
    decoder = ("decoder",) if table["decoder"].nunique() > 1 else ()
    return ("task", *family, "objective", "role", *decoder, "seed")


def table2(scores: pd.DataFrame, task_metrics: dict[str, str], decoders: Sequence[str]) -> pd.DataFrame:
    """The decoding sweep (the paper's Table 2): per task, decoder and objective, the task metric averaged
    over sampling runs and then over seeds; `seed_std` is the spread over seeds, `run_std` the mean
    run-to-run spread of a sampling decoder, and `drop_from_greedy` how far the decoder falls below greedy
    decoding of the same models (empty when greedy is not in the sweep)."""
    rows = []
    for task, metric in task_metrics.items():
        runs = average_sample_runs(scores[scores["task"] == task], [metric])
        for (decoder, objective), group in runs.groupby(["decoder", "objective"], sort=False):
            rows.append(
                {
                    "task": task,
                    "decoder": decoder,
                    "objective": objective,
                    "metric": metric,
                    "mean": group[metric].mean(),
                    "seed_std": group[metric].std(ddof=1),
                    "run_std": group[f"{metric}_run_std"].mean(),
                    "n_seeds": len(group),
                    "n_samples": int(group["n_samples"].max()),
                }
            )
    table = pd.DataFrame(rows)
    greedy = table[table["decoder"] == "greedy"].set_index(["task", "objective"])["mean"]
    table["drop_from_greedy"] = [
        greedy.get((t, o), float("nan")) - m for t, o, m in table[["task", "objective", "mean"]].itertuples(index=False)
    ]
    order = {name: i for i, name in enumerate(decoders)}
    table.insert(table.columns.get_loc("objective") + 1, "role", table["objective"].map(objective_names.role))
    table["_decoder"] = table["decoder"].map(order)
    table["_objective"] = table["objective"].map(objective_names.rank)
    return (
        table.sort_values(["task", "_decoder", "_objective"], kind="stable").drop(columns=["_decoder", "_objective"]).reset_index(drop=True)
    )


def table2_markdown(table: pd.DataFrame, digits: int = 2) -> str:
    """Per task: rows decoders, columns objectives, `mean ± seed std`; then the drop from greedy decoding."""
    blocks = []
    for task, frame in table.groupby("task", sort=False):
        objectives = list(dict.fromkeys(frame["objective"]))
        metric = frame["metric"].iloc[0]
        name = f"{task} ({frame['family'].iloc[0]} model)" if "family" in frame.columns else task
        for title, cell in (
            (f"{name}: {metric} by decoder (mean ± std over seeds)", _mean_cell),
            (f"{name}: drop in {metric} from greedy decoding", _drop_cell),
        ):
            header = " | ".join(objective_names.tagged(o) for o in objectives)
            lines = [f"**{title}**", "", f"| decoder | {header} |", "|---|" + "---|" * len(objectives)]
            for decoder, rows in frame.groupby("decoder", sort=False):
                by_objective = rows.set_index("objective")
                cells = [cell(by_objective.loc[o], digits) if o in by_objective.index else "-" for o in objectives]
                lines.append(f"| {decoder} | " + " | ".join(cells) + " |")
            blocks.append("\n".join(lines))
    note = "Sampling decoders: each seed's value is the mean of its runs (`n_samples`); `run_std` in the CSV is their spread."
    return "\n\n".join([*blocks, note]) + "\n"


def _mean_cell(row: pd.Series, digits: int) -> str:
    text = f"{row['mean']:.{digits}f}"
    return text + (f" ± {row['seed_std']:.{digits}f}" if pd.notna(row["seed_std"]) else "")


def _drop_cell(row: pd.Series, digits: int) -> str:
    return "-" if pd.isna(row["drop_from_greedy"]) else f"{row['drop_from_greedy']:.{digits}f}"


def write_table2(table: pd.DataFrame, csv_path: str | Path, markdown_path: str | Path, note: str = "") -> None:
    write_csv(csv_path, table, float_format="%.4f")
    write_text(markdown_path, table2_markdown(table) + note)
