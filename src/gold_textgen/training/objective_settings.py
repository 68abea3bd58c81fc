"""The settings of one fine-tuning objective, as the trainer reads them."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..workflow.schema import defaults, load_schema
from ..workflow.views import uses_mle_rewards


@dataclass(frozen=True)
class ObjectiveSettings:
    """The settings of one fine-tuning objective (GOLD's paper symbols in brackets): a typed view of a
    task's validated `gold` block merged with one entry of its `objectives` (defaults and ranges are the
    schema's). The settings of other losses are None."""

    loss: str  # a key of objectives.table.LOSSES
    min_weight: float  # [u] floor of GOLD's importance weight; TaiLr's lower clamp
    sync_every: int  # [k] optimizer updates between re-syncs of pi_tilde
    sync_each_epoch: bool | None  # also re-sync pi_tilde at the start of every epoch (the authors' code)
    horizon: int  # future tokens in a return, besides the current one
    gamma: float  # discount inside the window
    label_smoothing: float  # [epsilon] unweighted, as in the authors' code
    rewards: str  # cached (looked up) or online (frozen MLE forward pass every step)
    reward: str | None  # GOLD: delta (GOLD-delta), p (GOLD-p: log p_MLE) or s (GOLD-s: p_MLE)
    floor: float | None  # GOLD: [c] floor of each reward term
    baseline: float | None  # GOLD: [b] return baseline; each of the horizon + 1 terms carries b / (horizon + 1)
    lag: bool | None  # GOLD: weights from pi_tilde (True) or from the current policy (False)
    density_ratio_threshold: float | None  # TaiLr's gamma
    mixing_ratio: float | None  # MixCE's eta
    drop_fraction: float | None  # loss truncation
    warmup: int | None
    window: int | None
    start_from: str | None  # the model fine-tuning starts from (mle, or another objective)
    baseline_margin: float | None  # policy gradient: moving-average baseline minus this margin
    samples_per_input: int | None  # policy gradient
    reward_metric: str | None  # policy gradient: None for the task metric
    sample_with_task_lengths: bool | None  # policy gradient: samples under the task's length rules (False: from pi)
    kl_weight: float | None  # ASFT: lambda of the KL anchor
    clip_low: float | None  # PSFT: the ratio's clip range [1 - clip_low, 1 + clip_high]
    clip_high: float | None
    temperature: float | None  # iw-SFT: tau
    max_weight: float | None  # iw-SFT: the importance weight's upper clamp
    alpha: float | None  # probability family: (1 - p^alpha) / alpha; EAFT: exponent of the entropy weight
    threshold: float | None  # probability family: keep tokens with p above/below it (None: all)
    threshold_side: str | None
    top_k: int | None  # EAFT: logits the entropy is taken over
    normaliser: float | None  # EAFT: the entropy is divided by it

    SHARED = ("loss", "min_weight", "sync_every", "horizon", "gamma", "label_smoothing", "rewards")

    @classmethod
    def from_config(cls, values: dict) -> ObjectiveSettings:
        missing = sorted(set(cls.SHARED) - set(values))
        if missing:
            raise ValueError(f"objective settings lack {', '.join(missing)}: pass the validated config (schema defaults filled in)")
        return cls(**{name: values.get(name) for name in cls.__dataclass_fields__})

    @classmethod
    def with_defaults(cls, **values) -> ObjectiveSettings:
        """An objective's settings (`loss`, `reward`, `min_weight`, ...) and those of the fine-tuning block
        (`sync_every`, `label_smoothing`, ...), the schema's defaults for every one not given; checked as a
        config is, so a misspelt or out-of-range setting is an error that names it."""
        schema = load_schema()["$defs"]
        objective_keys = set(schema["objective"]["properties"])
        known = objective_keys | set(schema["gold"]["properties"]) | set(schema["optimization"]["properties"])  # gold: allOf optimization
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown objective setting(s) {', '.join(unknown)} (see config.schema.yaml: gold, objective)")
        objective = defaults("objective", **{k: v for k, v in values.items() if k in objective_keys})
        block = defaults("gold", **{k: v for k, v in values.items() if k not in objective_keys})
        return cls.from_config({**block, **objective})

    @property
    def uses_lagged_policy(self) -> bool:
        """Whether the loss reads pi_tilde, the lagged copy of the policy (GOLD with a lag; PSFT's pi_old)."""
        return (self.loss == "gold" and bool(self.lag)) or self.loss == "psft"

    @property
    def uses_rewards(self) -> bool:
        """Whether the loss reads the frozen MLE model's probabilities of the references (GOLD-p and GOLD-s,
        iw-SFT's reference policy)."""
        return uses_mle_rewards({"loss": self.loss, "reward": self.reward})  # read every step: no asdict copy

    @property
    def uses_gold_returns(self) -> bool:
        """Whether the weights are multiplied by GOLD's returns built from those rewards."""
        return self.loss == "gold" and self.uses_rewards

    @property
    def uses_anchor(self) -> bool:
        """Whether the loss reads the frozen starting model's whole distribution (ASFT's KL anchor)."""
        return self.loss == "asft"

    def to_dict(self) -> dict:
        return {key: value for key, value in asdict(self).items() if value is not None}
