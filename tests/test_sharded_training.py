"""Sharded policies (training/sharded_weights.py): a policy whose weights torch's `fully_shard` (FSDP2)
sharded is refused, with the reason, where the helpers would be copied from its shards; a loss without
helpers trains it. Run in one process of a real gloo process group on the CPU."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.distributed as dist
from test_causal_models import tiny_causal_setup

from gold_textgen.training.helper_models import model_from_weights
from gold_textgen.training.trainer_losses import ObjectiveLoss


@pytest.fixture
def sharded_policy(tmp_path):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        start = tiny_causal_setup()[2].language_model
        policy = copy.deepcopy(start)
        fully_shard(policy, mesh=init_device_mesh("cpu", (1,)))
        yield start, policy
    finally:
        dist.destroy_process_group()


def test_a_policy_sharded_by_fsdp_is_refused_where_helpers_are_built_from_it(sharded_policy):
    start, policy = sharded_policy
    with pytest.raises(ValueError, match=r"sharded \(FSDP \(fully_shard\)\).*DDP"):
        ObjectiveLoss("gold", reward="s", reference_model=model_from_weights(start)).start(policy)
    with pytest.raises(ValueError, match="frozen model's weights are sharded"):
        ObjectiveLoss("asft", reference_model=policy).start(model_from_weights(start))
    ObjectiveLoss("nll").start(policy)  # no helper: nothing is copied from the shards
    ObjectiveLoss("dft").start(policy)
    batch = torch.tensor([[3, 4, 5, 6]])
    assert torch.isfinite(ObjectiveLoss("dft")(policy(input_ids=batch), batch))
