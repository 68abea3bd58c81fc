"""The paper's figures, drawn with matplotlib from the analysis tables (no computation here)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure  # the object API: no pyplot state, no display needed on cluster nodes

from ..runtime.files import atomic_open
from .objective_names import color, label


def save(figure: Figure, path: str | Path) -> None:
    """Write the figure atomically: a killed job leaves no half-written image."""
    suffix = Path(path).suffix.lstrip(".") or "png"
    with atomic_open(path, "wb") as handle:
        figure.savefig(handle, format=suffix, dpi=150, bbox_inches="tight")


def nll_histogram(tables: Mapping[str, pd.DataFrame], path: str | Path, near_zero_max: float = 1.0, tail_ylim: float = 0.01) -> None:
    """Figure 1: share of reference tokens by NLL; left the region near zero, right the whole range with
    the y-axis cropped so that the tail shows."""
    figure = Figure(figsize=(10, 3.8))
    near, whole = figure.subplots(1, 2)
    top = max(float(t["nll"].max()) for t in tables.values())
    whole_bins = np.linspace(0, np.ceil(top), 61)
    for index, (name, table) in enumerate(tables.items()):
        nll = table["nll"].to_numpy(dtype=float)
        weights = np.full(nll.size, 1.0 / nll.size)
        style = {"histtype": "step", "linewidth": 1.6, "color": color(name, index), "label": label(name), "weights": weights}
        near.hist(nll[nll <= near_zero_max], bins=np.linspace(0, near_zero_max, 41), **{**style, "weights": weights[nll <= near_zero_max]})
        whole.hist(nll, bins=whole_bins, **style)
    near.set(title=f"NLL in [0, {near_zero_max:g}]", xlabel="token NLL under the gold history", ylabel="share of reference tokens")
    whole.set(
        title=f"all tokens (y-axis cropped at {tail_ylim:g})", xlabel="token NLL under the gold history", ylabel="share of reference tokens"
    )
    whole.set_ylim(0, tail_ylim)
    for axis in (near, whole):
        axis.grid(alpha=0.3)
    figure.tight_layout()
    shared_legend(figure, near)
    save(figure, path)


def _band_plot(axis: Axes, stats: pd.DataFrame, x: str, name: str, index: int, linestyle: str = "-", suffix: str = "") -> None:
    axis.plot(stats[x], stats["mean"], linestyle=linestyle, marker=".", color=color(name, index), label=label(name) + suffix)
    axis.fill_between(stats[x], stats["low"], stats["high"], color=color(name, index), alpha=0.2, linewidth=0)


def nll_by_time_step(stats: pd.DataFrame, path: str | Path, confidence: float) -> None:
    """Figures 2 (right) and 5: NLL and accuracy at time step t given the gold prefix, with bands."""
    figure = Figure(figsize=(10, 3.8))
    axes = figure.subplots(1, 2)
    for index, name in enumerate(dict.fromkeys(stats["objective"])):
        for axis, measure in zip(axes, ("nll", "accuracy"), strict=True):
            _band_plot(axis, stats[(stats["objective"] == name) & (stats["measure"] == measure)], "t", name, index)
    axes[0].set(xlabel="time step t", ylabel="mean token NLL", title="NLL given the gold prefix")
    axes[1].set(xlabel="time step t", ylabel="accuracy of the argmax token (%)", title="accuracy given the gold prefix")
    for axis in axes:
        axis.grid(alpha=0.3)
    figure.tight_layout()
    shared_legend(figure, axes[0], f"{confidence:.0%} bootstrap bands")
    save(figure, path)


def shared_legend(figure: Figure, axis: Axes, title: str | None = None) -> None:
    """One legend for the whole figure, below its panels: it hides no curve or band, however many
    objectives there are (a legend inside the axes sat over the bands)."""
    handles, labels = axis.get_legend_handles_labels()
    if not handles:  # nothing drawn (a test set too small for any bin): say so on every panel instead
        for panel in figure.axes:
            panel.text(0.5, 0.5, "too few references for any point", ha="center", va="center", transform=panel.transAxes)
        return
    columns = min(len(handles), 4)
    figure.legend(
        handles, labels, title=title, fontsize="small", loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=columns, frameon=False
    )


def exposure_bias(stats: pd.DataFrame, path: str | Path, confidence: float) -> None:
    """Figure 4: sentence BLEU-n by output length against the real references (solid) and against shuffled
    references (dashed, the control), with bands."""
    orders = sorted(stats["order"].unique())
    figure = Figure(figsize=(5 * len(orders), 3.8))
    axes = figure.subplots(1, len(orders), squeeze=False)
    for axis, order in zip(axes[0], orders, strict=True):
        for index, name in enumerate(dict.fromkeys(stats["objective"])):
            for reference, linestyle, suffix in (("real", "-", ""), ("shuffled", "--", " (shuffled refs)")):
                rows = stats[(stats["objective"] == name) & (stats["order"] == order) & (stats["reference"] == reference)]
                _band_plot(axis, rows, "length", name, index, linestyle, suffix)
        axis.set(xlabel="output length (words, bin start)", ylabel=f"sentence BLEU-{order}", title=f"BLEU-{order} by output length")
        axis.grid(alpha=0.3)
    figure.tight_layout()
    shared_legend(figure, axes[0][0], f"{confidence:.0%} bootstrap bands; dashed: against shuffled references (the control)")
    save(figure, path)
