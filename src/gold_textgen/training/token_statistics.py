"""What TRL's SFTTrainer logs about the tokens a loss reads, logged by every trainer of this project too:
the mean entropy of the model's next-token distribution and the share of tokens it ranks first
(`entropy`, `mean_token_accuracy`, TRL's names), over the reference tokens of the updates since the last
log line. A falling entropy with a flat accuracy is the signature of a sharpening objective (GOLD, DFT)
that an NLL curve alone does not show."""

from __future__ import annotations

import torch

STATISTICS = ("entropy_sum", "correct", "tokens")


class TokenStatistics:
    """A Trainer mixin: `record_tokens` (or `record_outputs`) in compute_loss on training batches, the two means added to the
    Trainer's own log lines (those that carry the training loss)."""

    def record_tokens(self, scores: torch.Tensor, labels: torch.Tensor, normalise: bool = False) -> None:
        """`scores` [B, T, V]: log-probabilities (the log-softmax of the model's logits), or the logits
        themselves with `normalise`; `labels` [B, T] (-100: no token). The reference tokens' rows are taken
        first: padding can be half of a [B, T, V] table."""
        with torch.no_grad():
            mask = labels.ne(-100)
            logprobs = scores.detach()[mask].float()
            if normalise:
                logprobs = torch.log_softmax(logprobs, dim=-1)
            entropy = -(logprobs.exp() * logprobs).sum(-1)
            self._add_tokens(entropy.sum(), logprobs.argmax(-1).eq(labels[mask]).sum(), mask.sum())

    def record_outputs(self, outputs, labels: torch.Tensor) -> None:
        """The same from a forward's outputs: its `token_entropies` and `top_tokens` [B, T] where the model
        gives them instead of the table (a recurrent copy model asked for no logits), else its logits."""
        entropies = getattr(outputs, "token_entropies", None)
        if entropies is None:
            self.record_tokens(outputs.logits, labels, normalise=True)
            return
        mask = labels.ne(-100)
        self._add_tokens(entropies[mask].float().sum(), outputs.top_tokens.eq(labels)[mask].sum(), mask.sum())

    def _add_tokens(self, entropy_sum: torch.Tensor, correct: torch.Tensor, tokens: torch.Tensor) -> None:
        stats = self.__dict__.setdefault("_token_statistics", dict.fromkeys(STATISTICS, 0.0))
        # Accumulated as tensors: a Python float here would synchronise a GPU every step.
        stats["entropy_sum"] = stats["entropy_sum"] + entropy_sum
        stats["correct"] = stats["correct"] + correct
        stats["tokens"] = stats["tokens"] + tokens

    def log(self, logs: dict, *args, **kwargs) -> None:
        stats = self.__dict__.get("_token_statistics")
        if stats is not None and "loss" in logs:
            tokens = float(stats["tokens"])
            if tokens:
                logs["entropy"] = float(stats["entropy_sum"]) / tokens
                logs["mean_token_accuracy"] = float(stats["correct"]) / tokens
            self._token_statistics = dict.fromkeys(STATISTICS, 0.0)
        super().log(logs, *args, **kwargs)
