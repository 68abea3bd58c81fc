"""Sharded training is refused where the helper models are built from the policy's weights.

GOLD's lagged policy pi_tilde starts as a copy of the policy's weights and is re-synced from them every
`sync_every` updates; the frozen model is the starting weights. Under FSDP (torch's `fully_shard`, or the
`FullyShardedDataParallel` wrapper) or DeepSpeed ZeRO-3 a process holds a shard of each weight, or an
empty placeholder, so those copies would be built from shards. Until the helpers gather the full weights
(or keep sharded copies of their own) and a test compares such a run with one process, a sharded policy
stops the run here with the reason; data-parallel training (DDP) copies whole weights and runs.
"""

from __future__ import annotations

import torch


def sharding_of(model: torch.nn.Module) -> str | None:
    """The kind of sharding `model`'s weights are under, or None for whole weights."""
    for module in model.modules():
        if type(module).__name__ == "FullyShardedDataParallel":
            return "FSDP (FullyShardedDataParallel)"
    for parameter in model.parameters():
        if hasattr(parameter, "ds_id"):  # DeepSpeed ZeRO-3 partitions each parameter and tags it
            return "DeepSpeed ZeRO-3"
        if type(parameter).__name__ == "DTensor" or type(getattr(parameter, "data", None)).__name__ == "DTensor":
            return "FSDP (fully_shard)"
    return None


def refuse_sharded(model: torch.nn.Module, role: str, adapters: bool = False) -> None:
    """Raise ValueError naming the sharding of `model` (the run's `role`: the policy, the frozen model);
    `adapters`: the policy already trains a LoRA adapter, so that advice is no way out."""
    kind = sharding_of(model)
    if not kind:
        return
    if adapters:
        raise ValueError(
            f"the {role} trains a LoRA adapter over sharded weights ({kind}), which is not supported: pi_tilde and the frozen "
            "model are adapters of that base and would be built from shards. Train it data-parallel (DDP, torchrun): with an "
            "adapter the base weights are in memory once per process (docs/guide/slurm.md)"
        )
    raise ValueError(
        f"the {role}'s weights are sharded ({kind}): pi_tilde and the frozen model would be built from shards. "
        "Train data-parallel (DDP, torchrun) instead, or a LoRA adapter to fit a large model (docs/guide/slurm.md)"
    )
