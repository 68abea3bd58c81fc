"""Loss truncation (Kang & Hashimoto, ACL 2020): drop the training examples whose loss lies above an
online estimate of the (1 - drop_fraction) quantile of recent example losses, once warmed up.

As ddkang/loss_dropper loss_dropper/dropper.py, `LossDropper.forward`: per-sequence losses fill a ring
buffer of `window` values (the reference's `recompute`); until `warmup` losses have been seen every
example is kept; afterwards the cut-off is recomputed as numpy's percentile of the buffer at
(1 - drop_fraction) x 100 once more than `window` losses have arrived since the last computation, and an
example is kept when its loss is below the cut-off. The reference's defaults: drop_fraction 0.4,
warmup 10,000, window 10,000.

The kept examples' tokens get weight 1 and the dropped ones 0 in `weighted_nll`, whose sum is divided by
all reference tokens of the update (dropped ones included), as the reference multiplies dropped losses by
0 before averaging. The example loss it ranks is the token-mean NLL over the sequence's real tokens; the
reference's README example averages each row of `CrossEntropyLoss(ignore_index=pad, reduction="none")`
over the padded length instead, which makes an example's rank depend on the longest sequence of its
batch. The mean over real tokens keeps the rank a property of the example.
"""

from __future__ import annotations

import numpy as np
import torch


def sequence_losses(token_nll: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The token-mean NLL of each sequence, [B], detached (what the truncation ranks)."""
    token_nll = token_nll.detach().masked_fill(~mask, 0.0)
    return token_nll.sum(-1) / mask.sum(-1).clamp_min(1)


class LossTruncation:
    """The online cut-off of loss truncation; its state goes into every checkpoint (`state_dict`), so a
    resumed run drops exactly the examples the uninterrupted run drops."""

    def __init__(self, drop_fraction: float, warmup: int, window: int):
        self.keep_fraction = 1.0 - drop_fraction
        self.warmup = warmup
        self.values = np.zeros(window, dtype=np.float32)
        self.seen = 0  # losses observed in total
        self.since_cutoff = 0  # losses observed since the cut-off was last computed
        self.position = 0  # next slot of the ring buffer once it is full
        self.cutoff = np.inf

    def keep(self, losses: torch.Tensor) -> torch.Tensor:
        """Record this batch's example losses and return [B] with 1.0 for kept and 0.0 for dropped ones."""
        values = losses.detach().float().cpu().numpy().ravel()
        window = len(self.values)
        self.seen += len(values)
        self.since_cutoff += len(values)
        if self.seen < window:  # the buffer fills in order first
            self.values[self.seen - len(values) : self.seen] = values
            self.position += len(values)
            return torch.ones_like(losses)
        for value in values:
            self.values[self.position % window] = value
            self.position = (self.position + 1) % window
        if self.seen < self.warmup:
            return torch.ones_like(losses)
        if self.since_cutoff > window:
            self.cutoff = float(np.percentile(self.values, self.keep_fraction * 100))
            self.since_cutoff = 0
        return (losses < self.cutoff).to(losses.dtype)

    def state_dict(self) -> dict:
        return {
            "values": self.values.tolist(),
            "seen": self.seen,
            "since_cutoff": self.since_cutoff,
            "position": self.position,
            "cutoff": None if np.isinf(self.cutoff) else self.cutoff,
        }

    def load_state_dict(self, state: dict) -> None:
        self.values = np.asarray(state["values"], dtype=np.float32)
        self.seen, self.since_cutoff, self.position = state["seen"], state["since_cutoff"], state["position"]
        self.cutoff = np.inf if state["cutoff"] is None else state["cutoff"]


def truncated_batch_weights(batch, settings, state) -> torch.Tensor:
    """1 on every token of a kept sequence, 0 on a dropped one; `state.truncation` holds the cut-off."""
    keep = state.truncation.keep(sequence_losses(-batch.own, batch.mask))
    return keep.unsqueeze(-1).expand_as(batch.own).to(batch.own.dtype)
