"""Every fine-tuning loss described once, without torch, so the workflow can read it while it plans.

One `Loss` row per loss: the settings it reads (type, range, default, description), the helpers it needs
(`NEEDS`), how it is run (label smoothing, dropout), its label and colour in tables and figures, its
reference, and where its torch functions live. Everything else is derived from these rows:

- the `objective` part of the config schema (objective_schema.py: the `loss` enum, every setting, the
  per-loss defaults and required settings), and the check that no objective sets another loss's setting;
- `LossSettings`-style reads in training (`training/objective_settings.py`), the helper models a job builds
  and the trainer's checks that it has them (`needs`);
- the rows of `objectives/table.py` (the torch functions, imported from `functions`);
- the labels and colours of `analysis/objective_names.py`.

To add an objective: write its functions in a file of `objectives/`, add its row below, and test it (the
docs' "Add an objective" page walks through one).
"""

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


def _always(*needs: str) -> Callable[[Mapping[str, Any]], frozenset[str]]:
    return lambda settings: frozenset(needs)


def _gold_needs(settings: Mapping[str, Any]) -> frozenset[str]:
    needs = {"lagged_policy"} if settings.get("lag", True) else set()
    if settings.get("reward") != "delta":
        needs |= {"mle_rewards", "gold_returns"}
    return frozenset(needs)


_U = {"type": "number", "minimum": 0, "maximum": 1}
_REWARD = {"type": "number", "minimum": -1.0e6, "maximum": 1.0e6}  # a reward term's scale; beyond, float32 sums overflow
_K = {"type": "integer", "minimum": 1}
_POSITIVE = {"type": "number", "exclusiveMinimum": 0}

LOSSES: dict[str, Loss] = {
    row.name: row
    for row in (
        Loss(
            "gold",
            "GOLD: weight max(u, pi_tilde(y_t)) times a return of the frozen MLE model's rewards (Pang & He 2021)",
            "Pang & He, ICLR 2021; yzpang/gold-off-policy-text-gen-iclr21",
            "GOLD",
            "tab:red",
            ("gold:gold_batch_weights", None),
            {
                "reward": Setting({"enum": ["delta", "p", "s"]}, "delta (GOLD-delta), p (GOLD-p, log p_MLE) or s (GOLD-s, p_MLE)."),
                "min_weight": Setting(_U, "[u] floor of the importance weight max(u, pi_tilde).", 0.0),
                "floor": Setting(_REWARD, "[c] floor of each reward term.", 0.0),
                "baseline": Setting(
                    {"type": "number"}, "[b] return baseline; each of the horizon + 1 terms carries b / (horizon + 1).", 0.0
                ),
                "lag": Setting(
                    {"type": "boolean"}, "weights from pi_tilde (true) or from the current policy (false: the no-lag ablation).", True
                ),
                "horizon": Setting(
                    {"type": "integer", "minimum": 0}, "future tokens in a return, overriding the fine-tuning block's horizon.", None
                ),
                "sync_every": Setting(_K, "[k] updates between re-syncs of pi_tilde, overriding the fine-tuning block's sync_every.", None),
            },
            _gold_needs,
        ),
        Loss(
            "nll",
            "nll: weight 1 on every reference token, MLE continued on the fine-tuning schedule (the control)",
            "the MLE objective itself",
            "NLL",
            "tab:brown",
            ("weighted_nll:unit_weights", None),
        ),
        Loss(
            "dft",
            "dft: weight p_theta(y_t), detached (Wu et al. 2025)",
            "Wu et al. 2025, On the Generalization of SFT; TRL's dft_loss",
            "DFT",
            "tab:purple",
            ("token_weighting:dft_batch_weights", None),
            label_smoothing=0.0,
        ),
        Loss(
            "tailr",
            "tailr: weight p / (gamma + (1 - gamma) p), clamped below at min_weight (Ji et al. 2023)",
            "Ji et al., ICLR 2023; thu-coai/TaiLr fairseq/criterions/tailr.py (its translation recipe smooths labels)",
            "TaiLr",
            "tab:orange",
            ("token_weighting:tailr_batch_weights", None),
            {
                "density_ratio_threshold": Setting(
                    {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                    "gamma in p / (gamma + (1 - gamma) p) (1: DFT, towards 0: MLE).",
                ),
                "min_weight": Setting(_U, "lower clamp of the weight.", 0.0),
            },
        ),
        Loss(
            "mixce",
            "mixce: weight eta + (1 - eta) p (Zhang et al. 2023)",
            "Zhang et al., ACL 2023; bloomberg/MixCE-acl2023 gpt2.py",
            "MixCE",
            "tab:olive",
            ("token_weighting:mixce_batch_weights", None),
            {"mixing_ratio": Setting({"type": "number", "minimum": 0, "maximum": 1}, "eta, the share of plain MLE (1: MLE).")},
            label_smoothing=0.0,
        ),
        Loss(
            "loss_truncation",
            "loss_truncation: drops the examples whose loss is above an online quantile (Kang & Hashimoto 2020)",
            "Kang & Hashimoto, ACL 2020; ddkang/loss_dropper",
            "Loss truncation",
            "tab:cyan",
            ("loss_truncation:truncated_batch_weights", None),
            {
                "drop_fraction": Setting(
                    {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                    "share of examples dropped once warmed up (dropc).",
                    0.4,
                ),
                "warmup": Setting(_K, "example losses seen before any is dropped (min_count).", 10000),
                "window": Setting(_K, "recent example losses the cut-off is estimated from, and recomputed after (recompute).", 10000),
            },
            _always("truncation"),
            label_smoothing=0.0,
        ),
        Loss(
            "policy_gradient",
            "policy_gradient: REINFORCE on the model's own samples with the task metric as reward, interleaved with MLE updates "
            "(the paper's MLE+PG and GOLD+PG)",
            "Pang & He 2021, Table 4 (on-policy baselines)",
            "PG",
            "black",
            ("weighted_nll:unit_weights", None),
            {
                "baseline": Setting(
                    {"type": "number"}, "the constant reward baseline b (the paper searched 0, 0.01, 0.05, 0.1, 0.15).", 0.0
                ),
                "baseline_margin": Setting(
                    {"type": ["number", "null"]},
                    "use the mean reward of the last 100 steps minus this margin as the baseline (the paper: 0 or 0.05); "
                    "null keeps `baseline`.",
                    None,
                ),
                "samples_per_input": Setting(_K, "outputs sampled per input for each update (1: REINFORCE as in the paper).", 1),
                "reward_metric": Setting(
                    {"enum": ["bleu", "rouge2", None]},
                    "the sequence reward, the task metric by default (sentence BLEU or ROUGE-2 F1).",
                    None,
                ),
                "sample_with_task_lengths": Setting(
                    {"type": "boolean"},
                    "draw samples under the task's minimum length and no-repeat rule (true), or from the policy itself "
                    "(false: unbiased REINFORCE).",
                    False,
                ),
            },
            _always("sampling"),
        ),
        Loss(
            "asft",
            "asft: DFT plus lambda KL to the frozen starting model (Zhu et al. 2025)",
            "Zhu et al. 2025, Anchored Supervised Fine-Tuning; zhuchichi56/ASFT train_v2.py",
            "ASFT",
            "tab:pink",
            ("token_weighting:dft_batch_weights", "anchored:anchor_kl_batch_sum"),
            {
                "kl_weight": Setting(
                    {"type": "number", "minimum": 0},
                    "lambda, the weight of the KL anchor (the code and its run scripts: 0.1; the paper's runs: 0.05).",
                    0.1,
                ),
                "kl_direction": Setting(
                    {"enum": ["anchor_to_policy", "policy_to_anchor"]},
                    "anchor_to_policy: KL(pi_0 || pi_theta), what the authors' code computes; policy_to_anchor: KL(pi_theta || pi_0), "
                    "the paper's Eq. 6.",
                    "anchor_to_policy",
                ),
            },
            _always("anchor"),
            label_smoothing=0.0,
            dropout=False,
        ),
        Loss(
            "psft",
            "psft: PPO's clipped surrogate with advantage 1 against pi_old, the lagged policy (Zhu et al. 2025)",
            "Zhu et al. 2025, Proximal Supervised Fine-Tuning; zwhong714/PSFT (verl)",
            "PSFT",
            "darkgoldenrod",
            (None, "proximal:clipped_surrogate_batch_sum"),
            {
                "clip_low": Setting(
                    {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                    "the ratio pi_theta / pi_old is clipped below at 1 - clip_low.",
                    0.2,
                ),
                "clip_high": Setting({"type": "number", "exclusiveMinimum": 0}, "... and above at 1 + clip_high.", 0.28),
                "sync_every": Setting(_K, "updates between re-syncs of pi_old (the reference: every 8 mini-batch updates).", 8),
            },
            _always("lagged_policy"),
            label_smoothing=0.0,
            dropout=False,
        ),
        Loss(
            "iw_sft",
            "iw_sft: sequence weight clamp(exp(tau mean_t log pi_theta / pi_MLE), 0, max) (Qin & Springenberg 2025)",
            "Qin & Springenberg 2025; emmyqin/iw_sft bounding_trainers.py",
            "iw-SFT",
            "teal",
            ("importance_weighted:sequence_importance_batch_weights", None),
            {
                "temperature": Setting(_POSITIVE, "tau in exp(tau * mean log-ratio).", 1.0),
                "max_weight": Setting(_POSITIVE, "upper clamp of the sequence weight.", 16.0),
            },
            _always("mle_rewards"),
            label_smoothing=0.0,
            dropout=False,
        ),
        Loss(
            "probability",
            "probability: (1 - p^alpha) / alpha, optionally on the tokens above or below a probability threshold (Li et al. 2025)",
            "Li et al. 2025, Beyond Log Likelihood; GaotangLi/Beyond-Log-Likelihood fsdp_sft_trainer.py",
            "(1 - p^α)/α",
            "slateblue",
            (None, "probability_family:probability_family_batch_sum"),
            {
                "alpha": Setting(_POSITIVE, "the exponent in (1 - p^alpha) / alpha (1: DFT's gradient; towards 0: MLE).", 1.0),
                "threshold": Setting(
                    {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                    "train only on tokens whose probability is at least (threshold_side above) or at most (below) this; null: every token.",
                    None,
                ),
                "threshold_side": Setting(
                    {"enum": ["above", "below"]}, "which side of `threshold` is kept (OnlyTopP / OnlyBottomP).", "above"
                ),
            },
            label_smoothing=0.0,
        ),
        Loss(
            "eaft",
            "eaft: weight (top-k entropy / normaliser)^alpha (2026)",
            "Entropy-Adaptive Fine-Tuning (2026); LLaMA-Factory eaft_loss_func",
            "EAFT",
            "yellowgreen",
            ("entropy_weighting:entropy_batch_weights", None),
            {
                "alpha": Setting(_POSITIVE, "the exponent of the entropy weight.", 1.0),
                "top_k": Setting({"type": "integer", "minimum": 2}, "the logits the entropy is taken over.", 20),
                "normaliser": Setting(_POSITIVE, "the entropy is divided by this (about ln 20).", 3.0),
            },
            label_smoothing=0.0,
        ),
        Loss(
            "gem",
            "gem: cross-entropy against a detached generator softmax(logits / beta), which keeps output diversity (Li et al. 2025)",
            "Li et al., ICLR 2025, Preserving Diversity in Supervised Fine-Tuning of LLMs; liziniu/GEM gem_loss_func",
            "GEM",
            "sienna",
            (None, "gem:gem_batch_sum"),
            {
                "beta": Setting(_POSITIVE, "the generator's temperature: q = softmax(logits / beta).", 0.7),
                "h": Setting({"enum": ["linear", "log_sigmoid"]}, "the weight function h of the logit gap.", "linear"),
            },
            label_smoothing=0.0,
        ),
    )
}
DEFAULT_LOSS = "gold"
# Settings of every objective whatever its loss (besides its loss's own).
COMMON_SETTINGS = {
    "start_from": Setting(
        {"type": "string"},
        "The model fine-tuning starts from: `mle` (the MLE model of the same seed) or another objective of the experiment "
        "(GOLD+PG starts from GOLD-s).",
        "mle",
    ),
    "label_smoothing": Setting(
        {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
        "Label smoothing epsilon of this objective, added unweighted: (1 - eps) times the loss plus eps times the mean NLL over the "
        "vocabulary. Unset: the loss's reference's own (0 where the reference does not smooth), or the fine-tuning block's "
        f"label_smoothing for {', '.join(name for name, row in LOSSES.items() if row.label_smoothing is None)}.",
    ),
}


def loss_of(objective: Mapping[str, Any]) -> Loss:
    """The row of an objective's loss (an entry of a task's `objectives`); a KeyError names the known ones."""
    name = objective.get("loss", DEFAULT_LOSS)
    if name not in LOSSES:
        raise KeyError(f"unknown loss '{name}' (known: {', '.join(LOSSES)})")
    return LOSSES[name]


def needs(objective: Mapping[str, Any]) -> frozenset[str]:
    """What an objective's loss needs besides the policy (a subset of NEEDS), given its settings."""
    return loss_of(objective).needs(objective)


def function_modules(losses: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The modules the torch functions of the rows of `losses` (default: all) live in; objectives/table.py imports them by name."""
    names = {ref.split(":")[0] for name, row in LOSSES.items() if losses is None or name in losses for ref in row.functions if ref}
    return tuple(sorted(f"gold_textgen.objectives.{name}" for name in names))


def foreign_settings(objective: Mapping[str, Any]) -> list[str]:
    """The keys of an objective that are settings of other losses, not of its own (they would be silently
    ignored); none for an unknown loss, which the schema reports."""
    row = LOSSES.get(objective.get("loss", DEFAULT_LOSS))
    if row is None:
        return []
    return [key for key in objective if key != "loss" and key not in row.settings and key not in COMMON_SETTINGS and readers(key)]


def readers(setting: str) -> list[str]:
    """The losses that read `setting`."""
    return [name for name, row in LOSSES.items() if setting in row.settings]
