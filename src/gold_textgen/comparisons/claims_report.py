"""The claims table as readers see it (comparisons/claim_verdicts.py computes it): its markdown and the note on the
method."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from ..analysis.markdown import markdown_table


def method_note() -> str:
    return (
        "Each registered claim of the paper (the registry: docs/reference/claims.md) that this experiment's grid covers, tested as a "
        "claim about the method: the per-seed contrast's mean against 0, its noise the seeds' spread plus the test set's "
        "variance that every seed shares (examples resampled jointly across seeds and runs), the seeds' variance integrated "
        "over its chi-square and never below their seed-by-example variance, which the same resamples measure (floored: the "
        "seeds' spread fell below it). Each task's claims are one family, decided at Holm-adjusted levels "
        "in each direction: supported (above 0), contradicted (below 0) or inconclusive. The bounds are at the level that "
        "decided (one-sided, each side), so a bound beyond 0 and the verdict agree; p is Holm-adjusted. The paper's effect "
        "is carried to this run from the paper's row of the task's data set and model (else the median of its rows) by the "
        "registry's rule (a share of the baseline's score, or the paper's ratio); power: of "
        "this design (its seeds, its test set, its measured variances) to show that effect at Holm's strictest level, "
        "with the powers at the ends of the seeds' variance's 80% interval (three seeds measure it loosely); "
        "seeds: the fewest with 80% power (none: the test set's shared noise alone is too large; ruled out: the paper's "
        "effect lies above the upper bound, which this run excludes at the level that decided); detectable: the smallest "
        "effect this design shows with 80% power at that level, in the contrast's units (a ratio for perplexity), for "
        "every claim, with or without an effect in its source."
    )


def _number(value: float) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3g}"


def _bounds(row) -> str:
    levels = (
        f"{100 * (1 - row['level_for']):.4g}%"
        if row["level_for"] == row["level_against"]
        else f"{100 * (1 - row['level_for']):.4g}% / {100 * (1 - row['level_against']):.4g}%"
    )
    return f"[{_number(row['low'])}, {_number(row['high'])}] ({levels})"


def with_imported(table: pd.DataFrame, tests: Sequence, imported: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """`table` with the `imported` column: per claim, the compared models that were trained elsewhere and
    imported (`tests`: the claims' tests, whose names the table's `name` column holds)."""
    named = {test.name: ", ".join(m for m in (test.system, test.baseline) if m in imported.get(test.task, [])) for test in tests}
    return table.assign(imported=[named.get(name, "") for name in table["name"]])


def to_markdown(table: pd.DataFrame) -> str:
    headers = ["task", "verdict", "claim", "estimate", "bounds (level)", "p (Holm)", "paper's effect", "power", "seeds for 80%"]
    headers += ["detectable", "per seed"]
    rows = []
    for row in table.to_dict("records"):
        decided = row["p_against_holm"] if row["verdict"] == "contradicted" else row["p_for_holm"]
        needed = "-" if math.isnan(row["seeds_needed"]) else f"{row['seeds_needed']:.0f}"
        if math.isnan(row["seeds_needed"]) and not math.isnan(row["paper_effect"]):
            needed = "none"
        if not math.isnan(row["paper_effect"]) and row["paper_effect"] > row["high"]:
            needed = "ruled out"  # the paper's effect lies above the upper bound: no design question left
        name = row["name"] + (f" (imported: {row['imported']})" if row.get("imported") else "")
        cells = [row["task"], row["verdict"], f"{name}: {row['statement']}", _number(row["estimate"]), _bounds(row)]
        effect = _number(row["paper_effect"]) + (f" ({row['paper_row']})" if row.get("paper_row", "-") != "-" else "")
        power = _number(row["power"])
        if not math.isnan(row.get("power_low", float("nan"))):
            power += f" ({row['power_low']:.2f}-{row['power_high']:.2f})"
        if row.get("seed_floored"):
            power += " floored"
        cells += [_number(decided), effect, power, needed, _number(row.get("detectable", float("nan"))), row["per_seed"]]
        rows.append(cells)
    return markdown_table(headers, rows) + "\n\n" + method_note() + " Withdrawn claims: docs/reference/claims.md.\n"
