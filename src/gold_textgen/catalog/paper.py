"""The paper's objectives: GOLD (Pang & He, ICLR 2021), the MLE-continued control, and the on-policy
REINFORCE of its Table 4."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .rows import COUNT, REWARD, UNIT, Loss, Setting, always


def gold_needs(settings: Mapping[str, Any]) -> frozenset[str]:
    needs = {"lagged_policy"} if settings.get("lag", True) else set()
    if settings.get("reward") != "delta":
        needs |= {"mle_rewards", "gold_returns"}
    return frozenset(needs)


# Each row starts on a line of its own: a job's code identity reads the rows of its losses alone
# (bookkeeping/code_identity.py).
ROWS = (
    Loss(
        "gold",
        "GOLD: weight max(u, pi_tilde(y_t)) times a return of the frozen MLE model's rewards (Pang & He 2021)",
        "Pang & He, ICLR 2021; yzpang/gold-off-policy-text-gen-iclr21",
        "GOLD",
        "tab:red",
        ("gold:gold_batch_weights", None),
        {
            "reward": Setting({"enum": ["delta", "p", "s"]}, "delta (GOLD-delta), p (GOLD-p, log p_MLE) or s (GOLD-s, p_MLE)."),
            "min_weight": Setting(UNIT, "[u] floor of the importance weight max(u, pi_tilde).", 0.0),
            "floor": Setting(REWARD, "[c] floor of each reward term.", 0.0),
            "baseline": Setting({"type": "number"}, "[b] return baseline; each of the horizon + 1 terms carries b / (horizon + 1).", 0.0),
            "lag": Setting(
                {"type": "boolean"}, "weights from pi_tilde (true) or from the current policy (false: the no-lag ablation).", True
            ),
            "horizon": Setting(
                {"type": "integer", "minimum": 0}, "future tokens in a return, overriding the fine-tuning block's horizon.", None
            ),
            "sync_every": Setting(COUNT, "[k] updates between re-syncs of pi_tilde, overriding the fine-tuning block's sync_every.", None),
        },
        gold_needs,
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
        "policy_gradient",
        "policy_gradient: REINFORCE on the model's own samples with the task metric as reward, interleaved with MLE updates "
        "(the paper's MLE+PG and GOLD+PG)",
        "Pang & He 2021, Table 4 (on-policy baselines)",
        "PG",
        "black",
        ("weighted_nll:unit_weights", None),
        {
            "baseline": Setting({"type": "number"}, "the constant reward baseline b (the paper searched 0, 0.01, 0.05, 0.1, 0.15).", 0.0),
            "baseline_margin": Setting(
                {"type": ["number", "null"]},
                "use the mean reward of the last 100 steps minus this margin as the baseline (the paper: 0 or 0.05); "
                "null keeps `baseline`.",
                None,
            ),
            "samples_per_input": Setting(COUNT, "outputs sampled per input for each update (1: REINFORCE as in the paper).", 1),
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
        always("sampling"),
    ),
)
