"""Side-by-side examples (the paper's Tables 5-7): a fixed random sample of inputs with each system's
output and the reference."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..runtime.files import write_csv, write_text


def aligned_outputs(generations: Mapping[str, Sequence[dict]]) -> pd.DataFrame:
    """One row per example: id, source, reference and one column per system; the systems must have decoded
    the same examples in the same order."""
    names = list(generations)
    first = generations[names[0]]
    frame = pd.DataFrame(
        {"id": [g["id"] for g in first], "source": [g["source"] for g in first], "reference": [g["reference"] for g in first]}
    )
    for name in names:
        ids = [g["id"] for g in generations[name]]
        if ids != frame["id"].tolist():
            raise ValueError(f"the outputs of {name} do not cover the same examples in the same order as those of {names[0]}")
        frame[name] = [g["hypothesis"] for g in generations[name]]
    return frame


def sample_rows(frame: pd.DataFrame, count: int, seed: int) -> pd.DataFrame:
    """`count` rows drawn without replacement by `seed`, in their original order."""
    chosen = np.sort(np.random.default_rng(seed).choice(len(frame), size=min(count, len(frame)), replace=False))
    return frame.iloc[chosen].reset_index(drop=True)


def examples_markdown(sample: pd.DataFrame, systems: Sequence[str]) -> str:
    blocks = []
    for _, row in sample.iterrows():
        lines = [f"**{row['id']}**", "", "| | text |", "|---|---|", f"| input | {_cell(row['source'])} |"]
        lines += [f"| {name} | {_cell(row[name])} |" for name in systems]
        lines.append(f"| reference | {_cell(row['reference'])} |")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ") or "(empty)"


def write_examples(generations: Mapping[str, Sequence[dict]], count: int, seed: int, csv_path, markdown_path) -> pd.DataFrame:
    sample = sample_rows(aligned_outputs(generations), count, seed)
    write_csv(csv_path, sample)
    write_text(markdown_path, examples_markdown(sample, list(generations)))
    return sample
