"""How tables and figures name, order and colour the objectives: MLE first, then GOLD's in the paper's
order, the control and GOLD's ablations (the names configs/objectives.yaml uses), then the objectives after
GOLD under their loss's name (labels and colours from the loss catalog); an objective with another name (a
user's own) keeps its config name, comes last, and takes a free colour."""

from __future__ import annotations

from ..catalog import LOSSES

# name in the config -> (label in tables and figures, colour in figures), in the order they are shown: the
# names the shipped configs give GOLD's variants and ablations, then every other loss of the catalog under
# its own name (an objective named after its loss: `dft: {loss: dft}`), then the paper's on-policy runs.
GOLD_NAMES = {
    "mle": ("MLE", "tab:gray"),
    "gold_delta": ("GOLD-δ", "tab:blue"),
    "gold_p": ("GOLD-p", "tab:green"),
    "gold_s": ("GOLD-s", "tab:red"),
    "mle_continued": ("MLE continued (control)", "tab:brown"),
    "gold_s_no_lag": ("GOLD-s, no lag", "lightcoral"),
    "gold_s_u0": ("GOLD-s, u = 0", "darkred"),
    "gold_s_h0": ("GOLD-s, horizon 0", "salmon"),
}
ON_POLICY_NAMES = {"mle_pg": ("MLE+PG", "black"), "gold_pg": ("GOLD+PG", "magenta")}
OBJECTIVES = {
    **GOLD_NAMES,
    **{name: (row.label, row.colour) for name, row in LOSSES.items() if name not in ("gold", "nll", "policy_gradient")},
    **ON_POLICY_NAMES,
}


# What a row is to a reader of a table: the model every objective starts from, and the control that trains
# as long as the objectives do with weight 1 (a gain over it is the objective's, not more updates').
ROLES = {"mle": "baseline", "mle_continued": "control"}


def role(objective: str) -> str:
    """`baseline`, `control`, or empty for an objective under comparison."""
    return ROLES.get(objective, "")


def tagged(objective: str) -> str:
    """The config name with its role, as tables print it: `mle_continued (control)`."""
    return f"{objective} ({ROLES[objective]})" if objective in ROLES else objective


def label(objective: str) -> str:
    return OBJECTIVES[objective][0] if objective in OBJECTIVES else objective


def rank(objective: str) -> int:
    """Position of `objective` in tables (unlisted objectives after the listed ones)."""
    order = list(OBJECTIVES)
    return order.index(objective) if objective in OBJECTIVES else len(order)


def color(objective: str, index: int) -> str:
    """The objective's colour; an unlisted one takes the `index`-th colour of matplotlib's cycle."""
    return OBJECTIVES[objective][1] if objective in OBJECTIVES else f"C{index % 10}"
