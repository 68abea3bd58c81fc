"""The work of one job, counted from the config (and from past runs where they say more): optimizer
updates, dev examples decoded while training selects checkpoints, examples scored teacher-forced and
examples decoded per decoder. A device profile turns these counts into seconds (estimates.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..bookkeeping.resources import training_examples
from ..catalog import needs
from ..config.views import analysis_settings, evaluated_runs, task_config

TRAINING_RULES = {"train_mle": "mle", "fine_tune": "fine_tune"}


@dataclass(frozen=True)
class Folders:
    """Where an experiment's prepared data (`store`: results/<extends or name>) and its analyses (`experiment`:
    results/<name>) lie, for counts that past runs know better than the config."""

    store: Path
    experiment: Path

    @classmethod
    def of(cls, config: dict, root: Path = Path(".")) -> Folders:
        experiment = config["experiment"]
        return cls(root / "results" / (experiment["extends"] or experiment["name"]), root / "results" / experiment["name"])


@dataclass(frozen=True)
class JobWork:
    """Counts of the units a device profile times. `updates_bound` says where the updates come from:
    `cap` (the step cap: an upper bound), `past run` (the updates earlier runs of the same task and
    objective took before early stopping ended them) or `none` (a job that does not train)."""

    updates: int = 0
    fine_tuning: bool = False  # updates of the fine-tuning trainer (else MLE's)
    batch_size: int = 0
    helper_forwards: int = 0  # no-grad forward passes of helper models per update (lagged policy, online rewards)
    sampling: bool = False  # every update also samples from the policy (on-policy objectives)
    dev_decoded: int = 0  # dev examples decoded by the dev decoder over all evaluations while training
    dev_beams: int = 1
    scored: int = 0  # examples scored teacher-forced (reward cache, token NLL)
    decoded: dict[int, int] = field(default_factory=dict)  # beams -> examples decoded (sampling counts as 1)
    updates_bound: str = "none"


def split_examples(config: dict, task: str, split: str, results: Folders | None = None) -> int:
    """Examples of one split: the prepared file's lines where the workflow has written it, else the count
    cost.expected_examples records, else what the source says (a synthetic split's size, a sentence split's
    held-out sizes, the training lines)."""
    if results is not None:
        prepared = results.store / "data" / task / f"{split}.jsonl"
        if prepared.is_file():
            with open(prepared, "rb") as handle:
                return sum(1 for _ in handle)
    if (recorded := config["cost"]["expected_examples"].get(task, {}).get(split)) is not None:
        return recorded
    source = config["tasks"][task]["source"]
    if source["kind"] == "synthetic":
        return source[f"num_{split}"]
    if split == "train":
        return training_examples(source)
    if split in (source.get("sentence_split") or {}):  # null where the release's own files are read by prefix
        return source["sentence_split"][split]
    if split in (source.get("line_ranges") or {}):
        first, last = source["line_ranges"][split]
        return last - first + 1
    return config["tasks"][task]["fine_tune"]["eval_max_examples"] or 2000  # a public corpus's dev/test: thousands


def past_updates(results: Folders | None, task: str, objective: str) -> int | None:
    """Mean updates earlier runs of `objective` on `task` made (the experiment's training_summary.csv), or None."""
    if results is None:
        return None
    path = results.experiment / "analysis" / task / "training_summary.csv"
    if not path.is_file():
        return None
    summary = pd.read_csv(path)
    runs = summary[summary["objective"] == objective]
    return round(runs["global_step"].mean()) if len(runs) else None


# Where a training run's expected updates come from, most specific first (JobWork.updates_bound).
PAST_RUN, RECORDED, FIXED_BUDGET, CAP = "past run", "recorded", "fixed budget", "cap"


def expected_updates(config: dict, rule: str, task: str, objective: str, results: Folders | None = None) -> tuple[int, str]:
    """The updates a training run is expected to make, and where the figure comes from: this experiment's past
    runs, the counts recorded in cost.expected_updates, the step cap of a run without early stopping (what it
    makes), or else the step cap as an upper bound."""
    block = task_config(config, task)[TRAINING_RULES[rule]]
    cap = block["max_steps"]
    if block["early_stopping_patience"] is None:
        return cap, FIXED_BUDGET
    if (past := past_updates(results, task, objective)) is not None:
        return min(past, cap), PAST_RUN
    if (recorded := config["cost"]["expected_updates"].get(task, {}).get(objective)) is not None:
        return min(recorded, cap), RECORDED
    return cap, CAP


def extra_passes(settings: dict, objective: str) -> tuple[int, bool]:
    """What a fine-tuning update of `objective` runs besides the policy's forward and backward: the no-grad
    forwards of helper models (pi_tilde; the frozen MLE model where rewards are online), and whether it also
    samples from the policy (`settings`: task_config)."""
    needed = needs(settings["objectives"][objective])
    rewards_online = settings["fine_tune"].get("rewards") == "online" and "mle_rewards" in needed
    return int("lagged_policy" in needed) + int(rewards_online), "sampling" in needed


def start_order(settings: dict, objective: str) -> int:
    """A fine-tuning job's Snakemake priority: the runs whose updates do more than the policy's forward and
    backward (extra_passes) are the longest, and started before the others they leave no long run alone at
    the end of a run. Below the reward cache's and MLE's (rules/train.smk)."""
    helpers, sampling = extra_passes(settings, objective)
    return helpers + int(sampling)


def training_work(config: dict, rule: str, task: str, objective: str, expected: bool, results: Folders | None = None) -> JobWork:
    """The work of a train_mle or fine_tune job: every update to the step cap, or (`expected`) the updates
    `expected_updates` finds."""
    settings = task_config(config, task)
    block = settings[TRAINING_RULES[rule]]
    updates, bound = expected_updates(config, rule, task, objective, results) if expected else (block["max_steps"], CAP)
    evaluations = updates // block["eval_steps"]
    dev = min(block["eval_max_examples"] or math.inf, split_examples(config, task, "valid", results))
    helpers, sampling = extra_passes(settings, objective) if rule == "fine_tune" else (0, False)
    return JobWork(
        updates=updates,
        fine_tuning=rule == "fine_tune",
        batch_size=block["batch_size"],
        helper_forwards=helpers,
        sampling=sampling,
        dev_decoded=int(evaluations * dev),
        dev_beams=settings["dev_search"].get("num_beams", 1),
        updates_bound=bound,
    )


def evaluation_work(config: dict, task: str, split: str, results: Folders | None = None) -> JobWork:
    """The work of an evaluate_<split> job: the split's token NLL, then every decoding run on it."""
    examples = split_examples(config, task, split, results)
    decoded: dict[int, int] = {}
    for decoder, _ in evaluated_runs(config, analysis_settings(config), split):
        settings = config["decoders"][decoder]
        beams = 1 if settings["do_sample"] else settings.get("num_beams", 1)
        decoded[beams] = decoded.get(beams, 0) + examples
    return JobWork(scored=examples, decoded=decoded)


def job_work(config: dict, rule: str, wildcards: dict, expected: bool = True, results: Folders | None = None) -> JobWork:
    """The work of any job (rules that run no model do none a profile times: their start alone)."""
    task = wildcards.get("task")
    if rule in TRAINING_RULES:
        return training_work(config, rule, task, wildcards.get("objective", "mle"), expected, results)
    if rule == "cache_rewards":
        return JobWork(scored=split_examples(config, task, "train", results))
    if rule.startswith("evaluate_"):
        return evaluation_work(config, task, rule.removeprefix("evaluate_"), results)
    return JobWork()
