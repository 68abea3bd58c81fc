"""Training curves from the models' own logs (`log_history.json`): the dev metric and the training loss
against updates, one line per objective and seed, the selected checkpoint marked and the step cap
drawn; GOLD's mean importance weight and mean return in their own panel. A run that reached its step
cap with its best checkpoint at its last evaluation was still improving when the cap stopped it: it is
flagged in the figure, in the table, and by a warning at the end of the workflow (a run that early
stopping ended is not, whatever its last evaluation)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from ..bookkeeping.convergence import run_summary
from ..runtime.files import write_csv
from .figures import save
from .objective_names import color, label

CURVES = ("dev_metric", "train_loss", "mean_weight", "mean_return")


def run_curves(model_dir: str | Path) -> tuple[pd.DataFrame, dict]:
    """One run's curves (step, curve, value) and its summary (convergence.run_summary)."""
    model_dir = Path(model_dir)
    summary = run_summary(model_dir)
    keys = {"dev_metric": f"eval_{summary['metric']}", "train_loss": "loss", "mean_weight": "mean_weight", "mean_return": "mean_return"}
    rows = [
        {"step": entry["step"], "curve": curve, "value": float(entry[key])}
        for entry in json.loads((model_dir / "log_history.json").read_text())
        for curve, key in keys.items()
        if key in entry
    ]
    return pd.DataFrame(rows, columns=["step", "curve", "value"]), summary


CURVE_COLUMNS = ["objective", "seed", "step", "curve", "value"]
# A task whose models are all imported trains nothing: its summary has these columns and no row.
SUMMARY_COLUMNS = [
    "objective",
    "seed",
    "metric",
    "max_steps",
    "global_step",
    "selected_step",
    "last_eval_step",
    "still_improving",
    "converged",
]


def training_curves(models: Mapping[tuple[str, int], str | Path]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Curves and summaries of every (objective, seed) run, in the order given."""
    if not models:
        return pd.DataFrame(columns=CURVE_COLUMNS), pd.DataFrame(columns=SUMMARY_COLUMNS)
    curves, summaries = [], []
    for (objective, seed), model_dir in models.items():
        run, summary = run_curves(model_dir)
        curves.append(run.assign(objective=objective, seed=seed))
        summaries.append({"objective": objective, "seed": seed, **summary})
    return pd.concat(curves, ignore_index=True)[CURVE_COLUMNS], pd.DataFrame(summaries)


def still_improving_warnings(task: str, summary: pd.DataFrame) -> list[str]:
    """A warning per run that had not converged: still improving at its cap, or never improving."""
    messages = [
        f"task {task}, {row.objective} seed {row.seed}: still improving at its step cap (its best dev {row.metric} is "
        f"its last evaluation, at update {row.last_eval_step} of {row.max_steps}); a higher max_steps may help"
        for row in summary.itertuples()
        if row.still_improving
    ]
    never = summary[summary["never_improved"].astype(bool)] if "never_improved" in summary else summary.iloc[:0]
    return messages + [
        f"task {task}, {row.objective} seed {row.seed}: its dev {row.metric} never beat its first evaluation; check its "
        "training log (learning rate, data, lengths)"
        for row in never.itertuples()
    ]


def plot_training_curves(curves: pd.DataFrame, summary: pd.DataFrame, path: str | Path, title: str = "") -> None:
    """Columns: MLE, then GOLD fine-tuning; rows: dev metric, training loss, GOLD's weight and return. No
    run (every model imported): a figure that says so."""
    if summary.empty:
        figure = Figure(figsize=(7.5, 2.0))
        figure.text(0.5, 0.5, f"{title}\nno model is trained in this experiment (its models are imported)", ha="center", va="center")
        save(figure, path)
        return
    objectives = list(dict.fromkeys(summary["objective"]))
    columns = [("MLE", [o for o in objectives if o == "mle"]), ("fine-tuning from MLE", [o for o in objectives if o != "mle"])]
    columns = [(name, chosen) for name, chosen in columns if chosen]
    figure = Figure(figsize=(7.5 * len(columns), 9.0))
    axes = figure.subplots(3, len(columns), squeeze=False)
    seeds = sorted(summary["seed"].unique())
    styles = dict(zip(seeds, ["-", "--", ":", "-."] * len(seeds), strict=False))
    metric = summary["metric"].iloc[0]
    for column, (name, chosen) in enumerate(columns):
        dev, loss, gold = axes[:, column]
        for index, objective in enumerate(chosen):
            for seed in seeds:
                run = curves[(curves["objective"] == objective) & (curves["seed"] == seed)]
                if run.empty:
                    continue
                info = summary[(summary["objective"] == objective) & (summary["seed"] == seed)].iloc[0]
                style = dict(color=color(objective, index), linestyle=styles[seed], linewidth=1.2)
                tag = f"{label(objective)} seed {seed}"
                _line(dev, run, "dev_metric", style, tag + (" (still improving)" if info["still_improving"] else ""))
                if info["selected_step"] is not None:
                    chosen_point = run[(run["curve"] == "dev_metric") & (run["step"] == info["selected_step"])]
                    dev.plot(chosen_point["step"], chosen_point["value"], marker="*", markersize=11, color=style["color"], linestyle="")
                _line(loss, run, "train_loss", style, tag)
                _line(gold, run, "mean_weight", {**style, "linestyle": "-"}, f"{tag}: mean weight")
                _line(gold, run, "mean_return", {**style, "linestyle": ":"}, f"{tag}: mean return")
            cap = int(summary[summary["objective"] == objective]["max_steps"].max())
            for axis in (dev, loss):
                axis.axvline(cap, color="black", linewidth=0.8, linestyle="--")
        dev.set_title(f"{name}: dev {metric} (star: selected checkpoint; dashed: step cap)", fontsize=9)
        loss.set_title(f"{name}: training loss", fontsize=9)
        gold.set_title(f"{name}: GOLD's mean importance weight (solid) and return (dotted)", fontsize=9)
        for axis in (loss, gold):
            if axis.lines:
                axis.set_yscale("log")  # GOLD-p's returns (and so its loss) are an order of magnitude above the rest
        for axis in (dev, loss, gold):
            axis.set_xlabel("updates")
            axis.grid(alpha=0.3)
            if axis.lines and axis.get_legend_handles_labels()[0]:
                axis.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)  # beside, over no data
        if not gold.lines:
            gold.set_visible(False)
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    save(figure, path)


def _line(axis, run: pd.DataFrame, curve: str, style: dict, tag: str) -> None:
    points = run[run["curve"] == curve]
    if not points.empty:
        axis.plot(points["step"], points["value"], label=tag, **style)


def write_training_curves(task: str, models: Mapping[str, str], figure_path, curves_path, summary_path) -> list[str]:
    """`models` maps "objective/seed" to model folders. Writes the figure and both tables; returns the
    warnings for runs that were still improving."""
    keyed = {(key.split("/")[0], int(key.split("/")[1])): path for key, path in models.items()}
    curves, summary = training_curves(keyed)
    write_csv(curves_path, curves, float_format="%.6g")
    write_csv(summary_path, summary)
    plot_training_curves(curves, summary, figure_path, title=f"Training curves: {task}")
    return still_improving_warnings(task, summary)


def warnings_from_summaries(summaries: Sequence[tuple[str, str | Path]]) -> list[str]:
    """The still-improving warnings of every task's summary table (for the end of the workflow)."""
    messages = []
    for task, path in summaries:
        if Path(path).exists():
            messages += still_improving_warnings(task, pd.read_csv(path))
    return messages
