"""Sharded policies (training/sharded_weights.py): a policy whose weights torch's `fully_shard` (FSDP2)
sharded is refused, with the reason, where the helpers would be copied from its shards; a loss without
helpers trains it. Run in one process of a real gloo process group on the CPU; data-parallel training (DDP), which builds
the helpers from whole weights, trains on two torchrun workers to the weights of one process."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.distributed as dist
from test_causal_models import tiny_causal_setup

from gold_textgen.sft.trainer_losses import ObjectiveLoss
from gold_textgen.training.helper_models import model_from_weights


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


def test_a_lora_policy_under_fsdp_is_refused_as_unsupported_without_advising_an_adapter(sharded_policy):
    from peft import LoraConfig, get_peft_model
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    start, _ = sharded_policy
    adapted = get_peft_model(copy.deepcopy(start), LoraConfig(r=2, target_modules="all-linear"))
    fully_shard(adapted, mesh=init_device_mesh("cpu", (1,)))
    with pytest.raises(ValueError, match=r"trains a LoRA adapter over sharded weights .* not supported") as refused:
        ObjectiveLoss("gold", reward="s").start(adapted)
    assert "or a LoRA adapter" not in str(refused.value)


@pytest.mark.trl
@pytest.mark.slow
def test_gold_s_data_parallel_on_two_processes_equals_one_process(tmp_path):
    """torchrun's two gloo workers with two examples each train GOLD-s (pi_tilde and the frozen model in
    each worker, whole weights) to the weights one process trains with batches of four (this one, while
    the workers run)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from gold_s_sft_run import main as gold_s_sft_run
    from safetensors.torch import load_file

    script = Path(__file__).with_name("gold_s_sft_run.py")
    environment = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"}
    torchrun = [str(Path(sys.executable).with_name("torchrun")), "--standalone", "--nproc_per_node", "2"]  # a free port of its own
    workers = subprocess.Popen([*torchrun, str(script), str(tmp_path / "two"), "2"], env=environment, stderr=subprocess.PIPE, text=True)
    try:
        gold_s_sft_run(tmp_path / "one", 4)
    finally:
        _, errors = workers.communicate(timeout=600)
    assert workers.returncode == 0, errors[-3000:]
    one, two = (load_file(str(tmp_path / name / "weights.safetensors")) for name in ("one", "two"))
    start = tiny_causal_setup()[2].language_model.state_dict()
    assert max(float((one[key] - start[key]).abs().max()) for key in one) > 1e-4  # it trained
    assert max(float((one[key] - two[key]).abs().max()) for key in one) < 1e-5
