"""The fine-tuning objectives of 2025-2026: ASFT, PSFT, iw-SFT, the probability family, EAFT, GEM."""

from __future__ import annotations

from .rows import COUNT, POSITIVE, Loss, Setting, always

# Each row starts on a line of its own: a job's code identity reads the rows of its losses alone
# (bookkeeping/code_identity.py).
ROWS = (
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
        always("anchor", "distribution"),
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
            "sync_every": Setting(COUNT, "updates between re-syncs of pi_old (the reference: every 8 mini-batch updates).", 8),
        },
        always("lagged_policy"),
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
            "temperature": Setting(POSITIVE, "tau in exp(tau * mean log-ratio).", 1.0),
            "max_weight": Setting(POSITIVE, "upper clamp of the sequence weight.", 16.0),
        },
        always("mle_rewards"),
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
            "alpha": Setting(POSITIVE, "the exponent in (1 - p^alpha) / alpha (1: DFT's gradient; towards 0: MLE).", 1.0),
            "threshold": Setting(
                {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                "train only on tokens whose probability is at least (threshold_side above) or at most (below) this; null: every token.",
                None,
            ),
            "threshold_side": Setting({"enum": ["above", "below"]}, "which side of `threshold` is kept (OnlyTopP / OnlyBottomP).", "above"),
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
            "alpha": Setting(POSITIVE, "the exponent of the entropy weight.", 1.0),
            "top_k": Setting({"type": "integer", "minimum": 2}, "the logits the entropy is taken over.", 20),
            "normaliser": Setting(POSITIVE, "the entropy is divided by this (about ln 20).", 3.0),
        },
        always("distribution"),
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
            "beta": Setting(POSITIVE, "the generator's temperature: q = softmax(logits / beta).", 0.7),
            "h": Setting({"enum": ["linear", "log_sigmoid"]}, "the weight function h of the logit gap.", "linear"),
        },
        always("distribution"),
        label_smoothing=0.0,
    ),
)
