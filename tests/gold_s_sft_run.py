"""GOLD-s through ObjectiveSFTTrainer for three updates of a global batch of four, in one process or as one
of torchrun's data-parallel workers (gloo on the CPU); the first writes the trained weights.

    python tests/gold_s_sft_run.py OUT 4
    torchrun --nproc_per_node 2 tests/gold_s_sft_run.py OUT 2

(tests/test_sharded_training.py runs the second and calls `main` for the first, and compares them.)"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from safetensors.torch import save_file
from test_causal_models import tiny_causal_setup
from test_trainer_losses import SHIPPED, sft_trainer

from gold_textgen.sft.trainer_losses import ObjectiveLoss
from gold_textgen.training.helper_models import model_from_weights


def main(out: Path, per_device: int) -> None:
    records, tokenizer, start, _ = tiny_causal_setup()  # seeded: every worker starts from the same weights
    loss = ObjectiveLoss(**{**SHIPPED["gold_s"], "sync_every": 2}, reference_model=model_from_weights(start.language_model))
    policy = copy.deepcopy(start.language_model)
    trainer = sft_trainer(policy, tokenizer, records, out / "run", 3, loss, per_device_train_batch_size=per_device, save_strategy="no")
    trainer.train()
    if trainer.is_world_process_zero():
        save_file({name: tensor.detach().clone() for name, tensor in policy.state_dict().items()}, str(out / "weights.safetensors"))


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
    import torch.distributed as dist

    if dist.is_initialized():  # a worker that exits with its gloo group alive can abort in the group's destructor
        dist.destroy_process_group()
