"""Whether a finished training run had converged, read from its model folder alone (`provenance.json`,
`resolved_config.yaml`, `log_history.json`), and the guard that keeps fine-tuning off an MLE model that had
not: one whose step cap stopped it while it still improved (a gain of the fine-tuned model over it
measures the training budget left over, not the objective), or one whose dev metric never improved."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import yaml

log = logging.getLogger(__name__)

# How many of the last dev evaluations a message shows.
SHOWN_EVALUATIONS = 4


class UnconvergedStart(RuntimeError):
    """Fine-tuning asked to start from an MLE run that was still improving at its step cap."""


def dev_evaluations(model_dir: str | Path, metric: str) -> list[tuple[int, float]]:
    """(update, dev metric) of every evaluation of the run, in order."""
    history = json.loads((Path(model_dir) / "log_history.json").read_text())
    key = f"eval_{metric}"
    return [(int(entry["step"]), float(entry[key])) for entry in history if key in entry]


def never_improved(evaluations: list[tuple[int, float]]) -> bool:
    """Whether no dev evaluation after the first beat the first (a metric of 0 at every evaluation, say):
    early stopping then ends the run, but it learned nothing its first evaluation did not already show."""
    return len(evaluations) >= 2 and max(value for _, value in evaluations[1:]) <= evaluations[0][1]


def run_summary(model_dir: str | Path) -> dict:
    """The run's dev metric, step cap, updates made, selected (kept) and last evaluated update,
    `still_improving` (the cap stopped it while its last evaluation rose above every earlier one by more
    than early_stopping_threshold; a run that early stopping or a schedule ended is not), `never_improved`
    (no evaluation beat the first), `kept_first` (it kept its first evaluation's model though it trained on:
    with keep: best, a run that never improved) and `converged` (neither still improving nor kept first).
    A fixed-budget run (keep: last) whose dev metric never moved is converged: it kept what it trained."""
    model_dir = Path(model_dir)
    provenance = json.loads((model_dir / "provenance.json").read_text())
    training = yaml.safe_load((model_dir / "resolved_config.yaml").read_text())["training"]
    cap = training["max_steps"]
    evaluations = dev_evaluations(model_dir, provenance["metric"])
    best = int(provenance["best_checkpoint"].split("-")[1]) if provenance.get("best_checkpoint") else None
    selected = provenance["global_step"] if provenance.get("kept") == "last" else best
    last = evaluations[-1][0] if evaluations else None
    # Still rising at the cap: its last evaluation beat every earlier one by more than the rise early
    # stopping counts as an improvement (whichever model it keeps): a rise within it is the metric's noise.
    still_improving = provenance["global_step"] >= cap and rising_at_end(evaluations, training.get("early_stopping_threshold", 0.0))
    return {
        "metric": provenance["metric"],
        "max_steps": cap,
        "global_step": provenance["global_step"],
        "selected_step": selected,
        "last_eval_step": last,
        "still_improving": still_improving,
        "never_improved": never_improved(evaluations),
        "kept_first": kept_first(selected, evaluations, provenance["global_step"]),
        # a run that kept its first evaluation's model learned nothing it kept (never_improved, with keep: best)
        "converged": not still_improving and not kept_first(selected, evaluations, provenance["global_step"]),
    }


def rising_at_end(evaluations: list[tuple[int, float]], threshold: float) -> bool:
    """Whether the last evaluation beat every earlier one by more than `threshold` (a single one: it did)."""
    if not evaluations:
        return False
    if len(evaluations) == 1:
        return True
    return evaluations[-1][1] > max(value for _, value in evaluations[:-1]) + threshold


def kept_first(selected: int | None, evaluations: list[tuple[int, float]], updates: int) -> bool:
    """Whether the run kept the model of its first evaluation though it trained on after it: what it keeps
    is what it was after those few updates, not what its training made."""
    return bool(evaluations) and selected == evaluations[0][0] and updates > selected


def unconverged_message(model_dir: str | Path) -> str | None:
    """Why fine-tuning should not start from the run in `model_dir`, or None when it converged."""
    summary = run_summary(model_dir)
    if summary["converged"]:
        return None
    if summary["never_improved"]:
        first_step, first = dev_evaluations(model_dir, summary["metric"])[0]
        return (
            f"the starting MLE run {model_dir} never improved: no dev {summary['metric']} evaluation beat its first "
            f"({first:.2f} at update {first_step}), so it learned nothing a fine-tuned model could be fairly compared with. "
            "Check its training log (learning rate, data, lengths), then rebuild the MLE model; or set "
            "experiment.allow_unconverged_mle: true to fine-tune anyway (the tables then mark these rows)"
        )
    shown = dev_evaluations(model_dir, summary["metric"])[-SHOWN_EVALUATIONS:]
    trail = ", ".join(f"{value:.2f} at {step}" for step, value in shown)
    return (
        f"the starting MLE run {model_dir} was still improving when its step cap stopped it (max_steps "
        f"{summary['max_steps']}; its last dev {summary['metric']} evaluations: {trail}; the best is the last), so a "
        "fine-tuned model would gain from the training MLE had left to do. Raise the task's mle.max_steps, or let a "
        "schedule end it (mle.lr_scheduler: halve_on_plateau with max_epochs), then rebuild the MLE model; or set "
        "experiment.allow_unconverged_mle: true to fine-tune anyway (the tables then mark these rows)"
    )


def require_converged_start(start_dir: str | Path, starts_from_mle: bool, allowed: bool) -> None:
    """Stop a fine-tuning job whose starting MLE run was still improving at its cap, unless `allowed`
    (then log a warning). A start from another objective was checked when that objective trained."""
    message = unconverged_message(start_dir) if starts_from_mle else None
    if message is None:
        return
    if not allowed:
        raise UnconvergedStart(message)
    log.warning("WARNING: %s (allowed by experiment.allow_unconverged_mle)", message.split("; or set")[0])
