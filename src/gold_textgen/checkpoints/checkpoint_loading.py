"""Loading the best checkpoint back without a warning for the weights a checkpoint never holds.

A checkpoint leaves out tied weights (token embeddings and the output layer share one matrix, saved once)
and sinusoidal position tables (computed, not learned). The Trainer forgives their absence only when the
missing keys are exactly `_keys_to_ignore_on_save`, so every model with both kinds logged "There were
missing keys in the checkpoint model loaded: [...embed_tokens..., ...embed_positions...]" at the end of
every run, a warning that hid the real one a truly missing weight would give. Here exactly those keys are
forgiven; any other missing or unexpected key is still reported by the Trainer.
"""

from __future__ import annotations

from collections.abc import Iterable

from torch import nn


def never_saved_keys(model: nn.Module) -> set[str]:
    """The state-dict keys a saved checkpoint of `model` does not hold: tied copies and unsaved tables."""
    tied = getattr(model, "all_tied_weights_keys", None) or getattr(model, "_tied_weights_keys", None) or {}
    return set(tied) | set(getattr(model, "_keys_to_ignore_on_save", None) or ())


def unexplained_missing_keys(model: nn.Module, missing: Iterable[str]) -> list[str]:
    expected = never_saved_keys(model)
    return [key for key in missing if key not in expected]


class KnownMissingKeys:
    """Trainer mixin: after loading a checkpoint, warn only about keys no checkpoint of the model leaves out."""

    def _issue_warnings_after_load(self, load_result) -> None:
        missing = unexplained_missing_keys(self.model, load_result.missing_keys)
        if len(missing) != len(load_result.missing_keys):
            self.model.tie_weights()  # as the Trainer does when it forgives the absence
        super()._issue_warnings_after_load(load_result._replace(missing_keys=missing))
