"""Pairwise human evaluation (the paper's Table 5): export a sheet in which raters compare two systems'
outputs for the same input without knowing which is which, then tally filled sheets.

    python -m gold_textgen.analysis.human_eval tally --key key.csv rater1.csv rater2.csv rater3.csv [--output result.csv]

A sheet has one row per item (`item, input, output_a, output_b, preference`); raters write `A`, `B` or `tie`
in `preference`. The key (kept away from raters) says which system is A and which is B for each item.
Each item's verdict is the majority of its ratings (no majority counts as a tie), and the result gives the
share of items that the first system wins, loses and ties against the second, with Fleiss' kappa of the
raters' labels (their agreement beyond chance) and the two-sided sign test of wins against losses, ties
left out (scipy's exact binomial test: is either system preferred more often than a coin would say?).
"""

from __future__ import annotations

import argparse
import csv
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..runtime.files import write_csv
from .examples import aligned_outputs

LABELS = {"a": "A", "b": "B", "tie": "tie"}


class SheetError(ValueError):
    """A filled sheet is malformed; the message names the file and line."""


def build_sheet(
    generations: dict[str, Sequence[dict]], system: str, baseline: str, count: int, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rater sheet and its key: `count` random items, each system shown as A or B by a fair coin."""
    frame = aligned_outputs({system: generations[system], baseline: generations[baseline]})
    rng = np.random.default_rng(seed)
    chosen = np.sort(rng.choice(len(frame), size=min(count, len(frame)), replace=False))
    system_first = rng.random(len(chosen)) < 0.5
    sheet_rows, key_rows = [], []
    for item, (index, first) in enumerate(zip(chosen, system_first, strict=True), start=1):
        row = frame.iloc[index]
        a, b = (system, baseline) if first else (baseline, system)
        sheet_rows.append({"item": item, "input": row["source"], "output_a": row[a], "output_b": row[b], "preference": ""})
        key_rows.append({"item": item, "id": row["id"], "system_a": a, "system_b": b})
    return pd.DataFrame(sheet_rows), pd.DataFrame(key_rows)


def write_sheet(sheet: pd.DataFrame, key: pd.DataFrame, sheet_path, key_path) -> None:
    write_csv(sheet_path, sheet, quoting=csv.QUOTE_NONNUMERIC)
    write_csv(key_path, key)


def read_table(path: str | Path, columns: Sequence[str], **options) -> pd.DataFrame:
    """A CSV file a rater or the sheet's maker wrote, with `columns` among its own; what is not such a file
    is a SheetError naming it."""
    try:
        frame = pd.read_csv(path, **options)
    except (UnicodeDecodeError, pd.errors.EmptyDataError, pd.errors.ParserError) as error:
        raise SheetError(f"{path}: not a CSV table ({type(error).__name__}: {str(error).splitlines()[0]})") from None
    for column in columns:
        if column not in frame.columns:
            raise SheetError(f"{path}: no '{column}' column")
    return frame


def read_key(path: str | Path) -> pd.DataFrame:
    """The key written with the sheet: which system is A and which B, per item."""
    key = read_table(path, ("item", "system_a", "system_b"))
    if not pd.api.types.is_integer_dtype(key["item"]):
        raise SheetError(f"{path}: its 'item' column holds other values than item numbers")
    return key


def read_ratings(path: str | Path, items: Sequence[int]) -> dict[int, str]:
    """One rater's preferences by item, checked: every item of the key rated once with A, B or tie."""
    frame = read_table(path, ("item", "preference"), dtype={"preference": str}, keep_default_na=False)
    ratings = {}
    for line, (item, preference) in enumerate(zip(frame["item"], frame["preference"], strict=True), start=2):
        label = LABELS.get(str(preference).strip().lower())
        if label is None:
            raise SheetError(f"{path}:{line}: preference '{preference}' of item {item} is not A, B or tie")
        if not str(item).strip().isdigit():
            raise SheetError(f"{path}:{line}: item '{item}' is not an item number of the sheet")
        ratings[int(item)] = label
    missing = sorted(set(items) - set(ratings))
    if missing:
        raise SheetError(f"{path}: items {missing[:10]} are not rated")
    return ratings


def majority(labels: Sequence[str]) -> str:
    """The label most raters gave if more than half gave it; otherwise a tie."""
    label, votes = Counter(labels).most_common(1)[0]
    return label if votes * 2 > len(labels) else "tie"


def fleiss_kappa(ratings: Sequence[dict[int, str]], items: Sequence[int]) -> float:
    """Fleiss' kappa of several raters' labels on the same items (NaN for fewer than two raters, or when
    every rating is the same label, where agreement by chance is certain)."""
    raters = len(ratings)
    if raters < 2:
        return float("nan")
    labels = sorted(set(LABELS.values()))
    counts = np.array([[sum(rating[item] == label for rating in ratings) for label in labels] for item in items], dtype=float)
    shares = counts.sum(axis=0) / counts.sum()
    chance = float(np.sum(shares**2))
    observed = float(np.mean((np.sum(counts**2, axis=1) - raters) / (raters * (raters - 1))))
    return float("nan") if np.isclose(chance, 1.0) else (observed - chance) / (1 - chance)


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact binomial test of `wins` against `losses` (ties left out); 1 with neither."""
    # Imported here: scipy takes 0.6 s to import, paid by every analysis job that builds the sheet's module.
    from scipy import stats

    return 1.0 if wins + losses == 0 else float(stats.binomtest(wins, wins + losses, 0.5).pvalue)


def tally(key: pd.DataFrame, sheets: Sequence[str | Path]) -> pd.DataFrame:
    """Win/lose/tie percentages of each system against the other, from the raters' filled sheets, with the
    raters' agreement (Fleiss' kappa) and the sign test's p-value."""
    items = key["item"].astype(int).tolist()
    ratings = [read_ratings(path, items) for path in sheets]
    kappa = fleiss_kappa(ratings, items)
    outcome = Counter()
    systems = sorted(set(key["system_a"]) | set(key["system_b"]))
    for row in key.itertuples(index=False):
        verdict = majority([r[int(row.item)] for r in ratings])
        outcome["tie" if verdict == "tie" else (row.system_a if verdict == "A" else row.system_b)] += 1
    rows = []
    for system in systems:
        other = next(s for s in systems if s != system)
        rows.append(
            {
                "system": system,
                "versus": other,
                "win": 100 * outcome[system] / len(items),
                "lose": 100 * outcome[other] / len(items),
                "tie": 100 * outcome["tie"] / len(items),
                "items": len(items),
                "raters": len(sheets),
                "fleiss_kappa": kappa,
                "sign_test_p": sign_test(outcome[system], outcome[other]),
            }
        )
    return pd.DataFrame(rows)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    tally_parser = commands.add_parser("tally", help="turn filled sheets into win/lose/tie percentages")
    tally_parser.add_argument("--key", required=True, type=Path, help="the key.csv written with the sheet")
    tally_parser.add_argument("sheets", nargs="+", type=Path, help="filled sheets, one per rater")
    tally_parser.add_argument("--output", type=Path, help="write the result as CSV here (default: print it)")
    args = parser.parse_args(argv)
    for path in (args.key, *args.sheets):
        if not path.is_file():
            parser.error(f"{path}: a folder, not a file: name the files" if path.is_dir() else f"{path}: no such file")
    try:
        result = tally(read_key(args.key), args.sheets)
    except SheetError as error:
        raise SystemExit(f"error: {error}") from None
    if args.output:
        write_csv(args.output, result, float_format="%.1f")
    print(result.to_string(index=False, float_format=lambda v: f"{v:.1f}"))


if __name__ == "__main__":
    main()
