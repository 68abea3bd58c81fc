"""The token-weighting objectives of GOLD's time and just after: DFT, TaiLr, MixCE, loss truncation."""

from __future__ import annotations

from .rows import COUNT, UNIT, Loss, Setting, always

# Each row starts on a line of its own: a job's code identity reads the rows of its losses alone
# (bookkeeping/code_identity.py).
ROWS = (
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
            "min_weight": Setting(UNIT, "lower clamp of the weight.", 0.0),
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
            "warmup": Setting(COUNT, "example losses seen before any is dropped (min_count).", 10000),
            "window": Setting(COUNT, "recent example losses the cut-off is estimated from, and recomputed after (recompute).", 10000),
        },
        always("truncation"),
        label_smoothing=0.0,
    ),
)
