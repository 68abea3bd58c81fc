"""The settings of one fine-tuning objective, as the trainer reads them."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..workflow.views import uses_mle_rewards


@dataclass(frozen=True)
class ObjectiveSettings:
    """The settings of one fine-tuning objective (GOLD's paper symbols in brackets): a typed view of a
    task's validated `gold` block merged with one entry of its `objectives` (defaults and ranges are the
    schema's). The settings of other losses are None."""

    loss: str  # gold, dft, tailr, mixce, loss_truncation or nll (see objectives/)
    min_weight: float  # [u] floor of GOLD's importance weight; TaiLr's lower clamp
    sync_every: int  # [k] optimizer updates between re-syncs of pi_tilde
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

    SHARED = ("loss", "min_weight", "sync_every", "horizon", "gamma", "label_smoothing", "rewards")

    @classmethod
    def from_config(cls, values: dict) -> ObjectiveSettings:
        missing = sorted(set(cls.SHARED) - set(values))
        if missing:
            raise ValueError(f"objective settings lack {', '.join(missing)}: pass the validated config (schema defaults filled in)")
        return cls(**{name: values.get(name) for name in cls.__dataclass_fields__})

    @property
    def uses_lagged_policy(self) -> bool:
        return self.loss == "gold" and bool(self.lag)

    @property
    def uses_rewards(self) -> bool:
        """Whether the loss reads p_MLE of the frozen MLE model (GOLD-p and GOLD-s)."""
        return uses_mle_rewards({"loss": self.loss, "reward": self.reward})  # read every step: no asdict copy

    def to_dict(self) -> dict:
        return {key: value for key, value in asdict(self).items() if value is not None}
