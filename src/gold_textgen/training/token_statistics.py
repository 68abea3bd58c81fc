"""What TRL's SFTTrainer logs about the tokens a loss reads, logged by every trainer of this project too:
the mean entropy of the model's next-token distribution and the share of tokens it ranks first
(`entropy`, `mean_token_accuracy`, TRL's names), over the reference tokens of the updates since the last
log line. A falling entropy with a flat accuracy is the signature of a sharpening objective (GOLD, DFT)
that an NLL curve alone does not show."""

from __future__ import annotations

import torch

STATISTICS = ("entropy_sum", "correct", "tokens")


class TokenStatistics:
    """A Trainer mixin: `record_tokens` in compute_loss on training batches, the two means added to the
    Trainer's own log lines (those that carry the training loss)."""

    def record_tokens(self, scores: torch.Tensor, labels: torch.Tensor, normalise: bool = False) -> None:
        """`scores` [B, T, V]: log-probabilities (the log-softmax of the model's logits), or the logits
        themselves with `normalise`; `labels` [B, T] (-100: no token). The reference tokens' rows are taken
        first: padding can be half of a [B, T, V] table."""
        stats = self.__dict__.setdefault("_token_statistics", dict.fromkeys(STATISTICS, 0.0))
        with torch.no_grad():
            mask = labels.ne(-100)
            logprobs = scores.detach()[mask].float()
            if normalise:
                logprobs = torch.log_softmax(logprobs, dim=-1)
            entropy = -(logprobs.exp() * logprobs).sum(-1)
            # Accumulated as tensors: a Python float here would synchronise a GPU every step.
            stats["entropy_sum"] = stats["entropy_sum"] + entropy.sum()
            stats["correct"] = stats["correct"] + logprobs.argmax(-1).eq(labels[mask]).sum()
            stats["tokens"] = stats["tokens"] + mask.sum()

    def log(self, logs: dict, *args, **kwargs) -> None:
        stats = self.__dict__.get("_token_statistics")
        if stats is not None and "loss" in logs:
            tokens = float(stats["tokens"])
            if tokens:
                logs["entropy"] = float(stats["entropy_sum"]) / tokens
                logs["mean_token_accuracy"] = float(stats["correct"]) / tokens
            self._token_statistics = dict.fromkeys(STATISTICS, 0.0)
        super().log(logs, *args, **kwargs)
