"""File-level entry points of the analysis rules (`write_<rule>`): read the inputs the rule names, compute
with the analysis modules, write tables and figures atomically."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from ..evaluation.token_table import read_token_table
from ..runtime.files import read_jsonl, write_csv
from . import figures, objective_names
from .diversity import diversity_row
from .examples import write_examples
from .exposure_bias import bleu_by_length, length_bin_edges
from .human_eval import build_sheet, write_sheet
from .nll_analysis import by_time_step, nll_distribution_summary

Paths = Mapping[str, str | Path]


def _read_tables(paths: Paths) -> dict[str, pd.DataFrame]:
    return {name: read_token_table(path, "its evaluate rule") for name, path in paths.items()}


def write_nll_histogram(nll_paths: Paths, figure_path, summary_path) -> pd.DataFrame:
    tables = _read_tables(nll_paths)
    summary = nll_distribution_summary(tables)
    write_csv(summary_path, summary, float_format="%.4f")
    figures.nll_histogram(tables, figure_path)
    return summary


def write_nll_by_time_step(nll_paths: Paths, figure_path, stats_path, analysis: dict) -> pd.DataFrame:
    stats = by_time_step(_read_tables(nll_paths), analysis["bootstrap_resamples"], analysis["confidence"], analysis["draw_seed"])
    write_csv(stats_path, stats, float_format="%.4f")
    figures.nll_by_time_step(stats, figure_path, analysis["confidence"])
    return stats


def write_exposure_bias(generation_paths: Paths, figure_path, stats_path, analysis: dict) -> pd.DataFrame:
    generations = {name: read_jsonl(path) for name, path in generation_paths.items()}
    edges = length_bin_edges([len(g["hypothesis"].split()) for outputs in generations.values() for g in outputs], num_bins=8)
    parts = []
    for name, outputs in generations.items():
        stats = bleu_by_length(
            outputs, edges, resamples=analysis["bootstrap_resamples"], confidence=analysis["confidence"], seed=analysis["draw_seed"]
        )
        parts.append(stats.assign(objective=name))
    stats = pd.concat(parts, ignore_index=True)
    write_csv(stats_path, stats, float_format="%.4f")
    figures.exposure_bias(stats, figure_path, analysis["confidence"])
    return stats


def write_diversity(runs: Sequence[Mapping], data_path, output_path, max_order: int) -> pd.DataFrame:
    """One row per decoding run (`objective`, `seed`, `sample` and its `generations` file) and one for the
    references, in the order given."""
    records = read_jsonl(data_path)
    inputs = [r["source"] for r in records]
    rows = [
        {
            "system": "reference",
            "objective": "",
            "seed": "",
            "sample": "",
            **diversity_row([r["target"] for r in records], inputs, max_order),
        }
    ]
    for run in runs:
        generations = read_jsonl(run["generations"])
        if [g["id"] for g in generations] != [r["id"] for r in records]:
            raise ValueError(f"{run['generations']} does not cover the examples of {data_path} in order")
        texts = [g["hypothesis"] for g in generations]
        rows.append(
            {
                "system": f"{run['objective']}/seed{run['seed']}",
                "objective": run["objective"],
                "seed": run["seed"],
                "sample": run["sample"],
                **diversity_row(texts, inputs, max_order),
            }
        )
    frame = pd.DataFrame(rows)
    write_csv(output_path, frame, float_format="%.4f")
    return frame


def write_example_table(generation_paths: Paths, csv_path, markdown_path, analysis: dict) -> pd.DataFrame:
    generations = {objective_names.label(name): read_jsonl(path) for name, path in generation_paths.items()}
    return write_examples(generations, analysis["num_examples"], analysis["draw_seed"], csv_path, markdown_path)


def write_human_eval_sheet(generation_paths: Paths, sheet_path, key_path, analysis: dict) -> pd.DataFrame:
    """The pairwise sheet comparing the GOLD objective (`gold`) with MLE (`mle`)."""
    generations = {
        objective_names.label(analysis["gold_objective"]): read_jsonl(generation_paths["gold"]),
        "MLE": read_jsonl(generation_paths["mle"]),
    }
    system, baseline = generations
    sheet, key = build_sheet(generations, system, baseline, analysis["human_eval_items"], analysis["draw_seed"])
    write_sheet(sheet, key, sheet_path, key_path)
    return sheet
