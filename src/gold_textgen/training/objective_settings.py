"""The settings of one fine-tuning objective, as the trainer reads them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..catalog import COMMON_SETTINGS, DEFAULT_LOSS, LOSSES, Loss, foreign_settings
from ..config.schema import defaults, load_schema

# The fine-tuning block's settings an objective reads (its optimisation settings are the Trainer's).
BLOCK_SETTINGS = ("sync_every", "sync_each_epoch", "horizon", "gamma", "label_smoothing", "rewards")
KNOWN_SETTINGS = frozenset(BLOCK_SETTINGS) | set(COMMON_SETTINGS) | {name for row in LOSSES.values() for name in row.settings}


@dataclass(frozen=True)
class ObjectiveSettings:
    """One objective's settings: its `loss` and the values it reads, a typed view of a task's validated
    fine-tuning block merged with one entry of its `objectives` (defaults and ranges are the schema's, which
    the catalog builds). Read a setting as an attribute (`settings.min_weight`); a setting of another loss
    reads None, a name that is no setting at all is an AttributeError."""

    loss: str
    values: Mapping[str, Any]

    def __getattr__(self, name: str):
        values = self.__dict__.get("values")
        if values is not None and name in values:
            return values[name]
        if name in KNOWN_SETTINGS:
            return None
        raise AttributeError(f"'{name}' is not an objective setting (see gold_textgen/catalog/)")

    @classmethod
    def from_config(cls, values: Mapping[str, Any]) -> ObjectiveSettings:
        """From the validated fine-tuning block merged with one objective entry ({**block, **objective})."""
        missing = sorted(set(BLOCK_SETTINGS) - set(values))
        if missing:
            raise ValueError(f"objective settings lack {', '.join(missing)}: pass the validated config (schema defaults filled in)")
        loss = values.get("loss", DEFAULT_LOSS)
        if loss not in LOSSES:
            raise ValueError(f"unknown loss '{loss}' (known: {', '.join(LOSSES)})")
        kept = set(BLOCK_SETTINGS) | set(COMMON_SETTINGS) | set(LOSSES[loss].settings)
        return cls(loss, {name: value for name, value in values.items() if name in kept})

    @classmethod
    def with_defaults(cls, **values) -> ObjectiveSettings:
        """An objective's settings (`loss`, `reward`, `min_weight`, ...) and those of the fine-tuning block
        (`sync_every`, `label_smoothing`, ...), the schema's defaults for every one not given; checked as a
        config is, so a misspelt or out-of-range setting is an error that names it."""
        schema = load_schema()["$defs"]
        objective_keys = set(schema["objective"]["properties"])
        block_keys = set(schema["fine_tune"]["properties"]) | set(schema["optimization"]["properties"])  # the block: allOf optimization
        unknown = sorted(set(values) - objective_keys - block_keys)
        if unknown:
            raise ValueError(f"unknown objective setting(s) {', '.join(unknown)} (see config.schema.yaml: objective, fine_tune)")
        foreign = foreign_settings(values)
        if foreign:
            row = LOSSES[values.get("loss", DEFAULT_LOSS)]
            raise ValueError(
                f"objective setting(s) {', '.join(foreign)} do not apply to loss {row.name} (it reads {', '.join(row.settings) or 'none'})"
            )
        objective = defaults("objective", **{k: v for k, v in values.items() if k in objective_keys})
        block = defaults("fine_tune", **{k: v for k, v in values.items() if k not in objective_keys})
        return cls.from_config({**block, **objective})

    @property
    def row(self) -> Loss:
        return LOSSES[self.loss]

    @cached_property
    def needs(self) -> frozenset[str]:
        """What the loss reads besides the policy (catalog.NEEDS)."""
        return self.row.needs(self.values)

    @property
    def uses_lagged_policy(self) -> bool:
        """Whether the loss reads pi_tilde, the lagged copy of the policy (GOLD with a lag; PSFT's pi_old)."""
        return "lagged_policy" in self.needs

    @property
    def uses_rewards(self) -> bool:
        """Whether the loss reads the frozen MLE model's probabilities of the references (GOLD-p and GOLD-s,
        iw-SFT's reference policy)."""
        return "mle_rewards" in self.needs

    @property
    def uses_gold_returns(self) -> bool:
        """Whether the weights are multiplied by GOLD's returns built from those rewards."""
        return "gold_returns" in self.needs

    @property
    def uses_anchor(self) -> bool:
        """Whether the loss reads the frozen starting model's whole distribution (ASFT's KL anchor)."""
        return "anchor" in self.needs

    @property
    def uses_frozen_model(self) -> bool:
        """Whether the loss reads a frozen model at all (its rewards online, or its anchor): only then is one
        loaded (the library path's `reference_model`)."""
        return (self.uses_rewards and self.rewards == "online") or self.uses_anchor

    @property
    def reads_past_the_token(self) -> bool:
        """Whether a token's term reads other tokens of its example (GOLD's returns over the next tokens, loss
        truncation's per-example loss): a packed row cut mid-example changes it."""
        return bool({"gold_returns", "truncation"} & self.needs)

    @property
    def reads_distribution(self) -> bool:
        """Whether the loss reads the policy's whole distribution (a KL, an entropy, GEM's generator, label
        smoothing), not only its log-probs of the reference tokens: a model that gives those cheaply then
        still builds the [B, T, V] table."""
        return "distribution" in self.needs or bool(self.label_smoothing)

    @property
    def policy_dropout(self) -> bool:
        """False for the losses whose references compare the policy with a frozen model in the same
        no-dropout state (a ratio or a KL): the policy's forward then runs without dropout."""
        return self.row.dropout

    def to_dict(self) -> dict:
        return {"loss": self.loss, **{key: value for key, value in self.values.items() if value is not None}}
