"""Our numbers beside the paper's: for every number a task's `paper_results` lists (Tables 1, 2 and 3, the
lead-3 baselines), the mean over our training seeds (and over the runs of a sampling decoder, as the
paper's Table 2 averages 3), a percentile-bootstrap interval of that mean over the examples (the same
resampled examples for every run), and the difference. Each entry names the split and decoder it was
scored with (by default the experiment's evaluation split and first decoder; Table 2: the dev set and
each decoder of the sweep).

The paper's R-L is summary-level ROUGE-L (files2rouge), so it is compared with our ROUGE-Lsum; its BLEU
and perplexity with ours as the tables report them.

A number is compared (difference, whether the paper's number lies in our interval) only when it measures
the same thing: where the paper's model family differs from ours (its Table 1 rows are recurrent models),
or where a task's perplexity counts other tokens than the paper's (`perplexity_units`), our number is
shown with a note and the comparison is left blank.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..claims.paper_claims import EXPOSURE_BLEU_ORDER, LARGE_NLL, NEAR_ZERO_NLL
from ..config.views import entry_run
from ..evaluation import metrics, sacrebleu_statistics
from ..evaluation.token_table import read_token_table
from ..runtime.files import read_jsonl
from .exposure_bias import sentence_bleu
from .markdown import markdown_table

OUR_COLUMN = {"bleu": "bleu", "rouge1": "rouge1", "rouge2": "rouge2", "rougeL": "rougeLsum", "perplexity": "perplexity"}
COLUMNS = [
    "task",
    "paper_table",
    "paper_model",
    "our_model",
    "split",
    "decoder",
    "objective",
    "metric",
    "paper",
    "ours",
    "ours_ci_low",
    "ours_ci_high",
    "difference",
    "paper_in_ci",
    "n_runs",
    "note",
]


@dataclass(frozen=True)
class OurModel:
    """What the comparison needs to know about a task's model: its label, its family and, where its tokens
    differ from the paper's, what a perplexity token is."""

    label: str
    family: str
    perplexity_units: str | None = None


@dataclass
class Run:
    """One model's (or baseline's) test outputs: generations and, for a model, its token NLL table."""

    task: str
    objective: str
    seed: int
    generations: str
    nll: str | None = None
    split: str = "test"
    decoder: str = "greedy"
    sample: int = 0


class ExampleStatistics:
    """Per-example quantities of one run from which any resample's corpus metric follows; each is worked
    out on first use, so a BLEU task never pays for ROUGE and a baseline never reads an NLL table."""

    def __init__(self, run: Run, scoring: metrics.Scoring):
        rows = read_jsonl(run.generations)
        self.ids = [row["id"] for row in rows]
        self.hypotheses, self.references = [r["hypothesis"] for r in rows], [r["reference"] for r in rows]
        self.tokenize = scoring.bleu_tokenize
        self.rouge_variant = scoring.rouge
        self.nll_path = run.nll
        self.generations = run.generations

    @functools.cached_property
    def bleu(self) -> np.ndarray:
        return metrics.bleu_statistics(self.hypotheses, self.references, self.tokenize)

    @functools.cached_property
    def rouge(self) -> dict[str, np.ndarray]:
        return metrics.rouge_per_example(self.hypotheses, self.references, self.rouge_variant)

    @functools.cache  # noqa: B019 (one run's answers, kept for the run object's life)
    def answers(self, column: str) -> np.ndarray:
        return metrics.answer_metric_per_example(column, self.hypotheses, self.references)

    @functools.cached_property
    def nll_and_tokens(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Summed token NLL and token count per example (None for a run without an NLL table)."""
        if self.nll_path is None:
            return None
        table = self._token_nll.groupby("example")["nll"].agg(["sum", "count"])
        table = table.reindex(range(len(self.ids)), fill_value=0)
        return table["sum"].to_numpy(float), table["count"].to_numpy(float)

    @functools.cached_property
    def _token_nll(self) -> pd.DataFrame:
        if self.nll_path is None:
            raise ValueError(f"{self.generations}: the token NLL shares need the run's NLL table, and it has none")
        return read_token_table(self.nll_path, "its evaluate rule")

    def _token_share(self, inside) -> np.ndarray:
        """Per example: its reference tokens whose NLL `inside` selects, and all its tokens."""
        table = self._token_nll.assign(inside=inside(self._token_nll["nll"].to_numpy(float)))
        counts = table.groupby("example")["inside"].agg(["sum", "count"]).reindex(range(len(self.ids)), fill_value=0)
        return counts[["sum", "count"]].to_numpy(np.float64)

    @functools.cached_property
    def _length_and_quality(self) -> np.ndarray:
        """Per example: output length x (words), its sentence BLEU y, and x^2, x y, for a least-squares slope."""
        x = np.array([len(hypothesis.split()) for hypothesis in self.hypotheses], float)
        y = np.array([sentence_bleu(h, r, EXPOSURE_BLEU_ORDER) for h, r in zip(self.hypotheses, self.references, strict=True)])
        return np.stack([x, y, x * x, x * y], axis=1)

    def statistics(self, column: str) -> np.ndarray:
        """Per-example sufficient statistics of `column` (n x k): any set of examples is scored from their
        sum (score_sums). sacrebleu's metrics: their own statistics; perplexity: summed NLL and tokens;
        ROUGE and exact match: the per-example score; the token NLL shares: tokens inside and all tokens;
        the length slope: length, sentence BLEU, and their squares and product."""
        if column == "nll_below":
            return self._token_share(lambda nll: nll < NEAR_ZERO_NLL)
        if column == "nll_above":
            return self._token_share(lambda nll: nll > LARGE_NLL)
        if column == "length_slope":
            return self._length_and_quality
        if column == "bleu":
            return self.bleu.astype(np.float64)
        if column in sacrebleu_statistics.SACREBLEU_METRICS:
            return self._sacrebleu_statistics(column)
        if column == "perplexity":
            if self.nll_and_tokens is None:
                return np.full((len(self.ids), 2), np.nan)
            return np.stack(self.nll_and_tokens, axis=1)
        values = self.answers(column) if column in metrics.ANSWER_METRICS else self.rouge[column]
        return np.asarray(values, dtype=np.float64)[:, None]

    @functools.cache  # noqa: B019 (one run's statistics, kept for the run object's life)
    def _sacrebleu_statistics(self, column: str) -> np.ndarray:
        return sacrebleu_statistics.statistics(column, self.hypotheses, self.references)

    def score_sums(self, column: str, sums: np.ndarray, count: int) -> np.ndarray:
        """The metric of each row of summed statistics (R x k) over `count` examples."""
        if column in sacrebleu_statistics.SACREBLEU_METRICS:
            return sacrebleu_statistics.score_sums(column, sums, self.tokenize)
        if column == "perplexity":
            return np.exp(sums[:, 0] / sums[:, 1])
        if column in ("nll_below", "nll_above"):
            return sums[:, 0] / sums[:, 1]
        if column == "length_slope":
            x, y, xx, xy = sums.T
            with np.errstate(divide="ignore", invalid="ignore"):
                return (count * xy - x * y) / (count * xx - x * x)
        return sums[:, 0] / count

    def score(self, column: str, resamples: np.ndarray) -> np.ndarray:
        """The metric of each resample (rows of example indices); the full data is `np.arange(n)[None]`."""
        return self.score_sums(column, self.statistics(column)[resamples].sum(axis=1), resamples.shape[1])


def seed_mean_with_interval(
    runs: Sequence[ExampleStatistics], column: str, resamples: int, confidence: float, seed: int
) -> tuple[float, float, float]:
    """(mean over runs of the metric, and the percentile-bootstrap interval of that mean)."""
    size = len(runs[0].ids)
    if any(run.ids != runs[0].ids for run in runs):
        raise ValueError("the runs being averaged were scored on different examples")
    full = np.arange(size)[None, :]
    point = float(np.mean([run.score(column, full)[0] for run in runs]))
    indices = np.random.default_rng(seed).integers(0, size, size=(resamples, size))
    means = np.mean([run.score(column, indices) for run in runs], axis=0)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return point, float(low), float(high)


def comparison_table(
    runs: Sequence[Run],
    paper_results: dict[str, list[dict]],
    scoring: dict[str, metrics.Scoring],
    our_models: dict[str, OurModel],
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    default_run: tuple[str, str] = ("test", "greedy"),
) -> pd.DataFrame:
    """One row per number the paper reports for a task of ours; `ours` is empty where we have no such run.
    `default_run`: the (split, decoder) of an entry that names neither."""
    statistics: dict[tuple[str, str, str, str], list[ExampleStatistics]] = {}
    for run in runs:
        key = (run.task, run.objective, run.split, run.decoder)
        statistics.setdefault(key, []).append(ExampleStatistics(run, scoring[run.task]))
    rows = []
    for task, tables in paper_results.items():
        for entry in tables:
            split, decoder = entry_run(entry, default_run)
            for objective, numbers in entry["results"].items():
                # lead-3 has no decoder: its outputs are scored once per split.
                ours = statistics.get((task, objective, split, "lead3" if objective == "lead3" else decoder))
                for metric, paper in numbers.items():
                    row = {"task": task, "paper_table": entry["table"], "paper_model": entry["model"], "objective": objective}
                    row.update(split=split, decoder=decoder)
                    model = our_models[task]
                    row.update(metric=metric, paper=paper, our_model=model.label if objective != "lead3" else "lead-3")
                    row["note"] = incomparability(entry, model, objective, metric)
                    if ours:
                        point, low, high = seed_mean_with_interval(ours, OUR_COLUMN[metric], resamples, confidence, seed)
                        row.update(ours=point, ours_ci_low=low, ours_ci_high=high, n_runs=len(ours))  # seeds x sampling runs
                        if not row["note"]:
                            row.update(difference=point - paper, paper_in_ci=bool(low <= paper <= high))
                    rows.append(row)
    return pd.DataFrame(rows).reindex(columns=COLUMNS)


def incomparability(entry: dict, model: OurModel, objective: str, metric: str) -> str:
    """Why our number for this paper number is not comparable ('' when it is)."""
    if objective == "lead3":
        return ""
    if entry["family"] != model.family:
        return f"model families differ (paper: {entry['family']}, ours: {model.family})"
    if metric == "perplexity" and model.perplexity_units:
        return f"perplexity in other token units: {model.perplexity_units}"
    return ""


def to_markdown(table: pd.DataFrame) -> str:
    headers = [
        "task",
        "table",
        "split, decoder",
        "objective",
        "metric",
        "paper",
        "ours (95% CI)",
        "difference",
        "paper model / ours",
        "note",
    ]
    rows = []
    for _, row in table.iterrows():
        ours = "not run" if pd.isna(row["ours"]) else f"{row['ours']:.2f} ({row['ours_ci_low']:.2f}-{row['ours_ci_high']:.2f})"
        difference = "-" if pd.isna(row["difference"]) else f"{row['difference']:+.2f}"
        cells = [row["task"], str(row["paper_table"]), f"{row['split']}, {row['decoder']}", row["objective"], row["metric"]]
        cells += [f"{row['paper']:.2f}", ours, difference]
        cells.append(f"{row['paper_model']} / {row['our_model']}")
        cells.append(row["note"] if isinstance(row["note"], str) else "")
        rows.append(cells)
    return markdown_table(headers, rows)
