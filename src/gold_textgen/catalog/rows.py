"""What a catalog row is: a `Loss` with its `Setting`s and the helpers it may need (`NEEDS`), and the
setting schemas several rows share. No torch: the workflow reads the catalog while it plans."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# What a loss may need besides the policy's own output on the references (the trainer provides each):
NEEDS = {
    "lagged_policy": "pi_tilde, a copy of the policy re-synced every sync_every updates (log-probs of the references)",
    "mle_rewards": "the frozen MLE model's log-probs of the references (reward cache, or a frozen forward pass)",
    "gold_returns": "GOLD's returns built from those rewards (times the weights)",
    "anchor": "the frozen starting model's whole distribution at every reference position",
    "truncation": "loss truncation's online cut-off, kept in checkpoints",
    "sampling": "samples of the policy scored by the task metric (on-policy updates)",
    "distribution": "the policy's whole distribution at every reference position, not only the reference tokens' log-probs",
}
REQUIRED = object()  # a setting the user must give (no default)


@dataclass(frozen=True)
class Setting:
    schema: Mapping[str, Any]  # JSON Schema of its value (type, range, enum), shared by every loss that reads it
    description: str
    default: Any = REQUIRED


@dataclass(frozen=True)
class Loss:
    name: str  # the value of `loss:` in a config
    summary: str  # one line for the schema's description of `loss`
    reference: str  # paper and the code it was checked against
    label: str  # in tables and figures, when the objective is named after its loss
    colour: str  # matplotlib colour
    functions: tuple[str | None, str | None]  # "module:function" in gold_textgen.objectives: (weights, extra)
    settings: Mapping[str, Setting] = field(default_factory=dict)
    needs: Callable[[Mapping[str, Any]], frozenset[str]] = lambda settings: frozenset()
    label_smoothing: float | None = None  # None: the fine-tuning block's; a number: the reference's own
    dropout: bool = True  # False: the policy's forward runs without dropout (a ratio or KL against a frozen model)


def always(*needs: str) -> Callable[[Mapping[str, Any]], frozenset[str]]:
    return lambda settings: frozenset(needs)


UNIT = {"type": "number", "minimum": 0, "maximum": 1}
REWARD = {"type": "number", "minimum": -1.0e6, "maximum": 1.0e6}  # a reward term's scale; beyond, float32 sums overflow
COUNT = {"type": "integer", "minimum": 1}
POSITIVE = {"type": "number", "exclusiveMinimum": 0}
