"""How tables and figures name, order and colour the objectives: MLE first, then GOLD's in the paper's
order; an objective not listed (a user's own) keeps its config name, comes last, and takes a free colour."""

from __future__ import annotations

# name in the config -> (label in tables and figures, colour in figures), in the order they are shown
OBJECTIVES = {
    "mle": ("MLE", "tab:gray"),
    "gold_delta": ("GOLD-δ", "tab:blue"),
    "gold_p": ("GOLD-p", "tab:green"),
    "gold_s": ("GOLD-s", "tab:red"),
}


def label(objective: str) -> str:
    return OBJECTIVES[objective][0] if objective in OBJECTIVES else objective


def rank(objective: str) -> int:
    """Position of `objective` in tables (unlisted objectives after the listed ones)."""
    order = list(OBJECTIVES)
    return order.index(objective) if objective in OBJECTIVES else len(order)


def color(objective: str, index: int) -> str:
    """The objective's colour; an unlisted one takes the `index`-th colour of matplotlib's cycle."""
    return OBJECTIVES[objective][1] if objective in OBJECTIVES else f"C{index % 10}"
