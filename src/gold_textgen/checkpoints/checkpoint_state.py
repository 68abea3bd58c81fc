"""What a fine-tuning run keeps in every checkpoint beside the Trainer's own files, so that a resumed run
continues exactly as the uninterrupted one: the lagged policy pi_tilde, and the running state of an
objective (loss truncation's cut-off, the policy gradient's reward baseline)."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from transformers import TrainerCallback

log = logging.getLogger(__name__)
LAGGED_POLICY_FILE = "lagged_policy.safetensors"
TRUNCATION_STATE_FILE = "loss_truncation.json"
BASELINE_STATE_FILE = "reward_baseline.json"
FROZEN_ADAPTER_FILE = "frozen_adapter.safetensors"


class StateInCheckpoints(TrainerCallback):
    """Keeps an objective's running state (loss truncation's cut-off, the policy gradient's reward
    baseline) in every checkpoint as JSON, so a resumed run continues exactly as the uninterrupted one."""

    def __init__(self, state, file_name: str):
        self.state = state  # anything with state_dict() and load_state_dict()
        self.file_name = file_name

    def on_save(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / self.file_name).write_text(json.dumps(self.state.state_dict()))

    def restore(self, checkpoint: str | Path) -> None:
        path = Path(checkpoint) / self.file_name
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: cannot resume with the same {self.file_name.split('.')[0]} state")
        self.state.load_state_dict(json.loads(path.read_text()))


class WeightsInCheckpoints(TrainerCallback):
    """Keeps a helper model's weights in every checkpoint (safetensors), for a resumed run to load them.
    `model` is a module or anything with state_dict() and load_state_dict(state, strict) (a LoRA adapter
    helper, training/helper_models.py)."""

    def __init__(self, model, file_name: str):
        self.model = model
        self.file_name = file_name

    def on_save(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            folder.mkdir(parents=True, exist_ok=True)
            tensors = {k: v.detach().cpu().contiguous() for k, v in self.model.state_dict().items()}
            save_file(_untied(tensors), str(folder / self.file_name))

    def restore(self, checkpoint: str | Path) -> None:
        """Load the weights from a checkpoint, strictly: only the tied copies that `_untied` left out of the
        file may be missing, and they are checked by name."""
        path = Path(checkpoint) / self.file_name
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: cannot resume with the same {self.file_name.split('.')[0]}")
        state = self.model.state_dict()
        tied = set(state) - set(_untied(state))
        result = self.model.load_state_dict(load_file(str(path)), strict=False)
        unexpected, untied_missing = result.unexpected_keys, sorted(set(result.missing_keys) - tied)
        if unexpected or untied_missing:
            raise ValueError(
                f"{path} does not match the model: missing {untied_missing or 'nothing'}, unexpected {unexpected or 'nothing'}"
            )
        log.info("restored %s from %s", self.file_name.split(".")[0], path)


class LaggedPolicySync(WeightsInCheckpoints):
    """Copies the policy into pi_tilde every `every` optimizer updates (and, with `each_epoch`, when an epoch
    ends), and keeps pi_tilde in checkpoints.

    The copy happens after update number k, 2k, ...: batches k+1 .. 2k are weighted by the policy as it
    was after update k. On resume, pi_tilde is loaded from the checkpoint it was saved with.
    """

    def __init__(self, lagged_model, every: int, each_epoch: bool = False):
        super().__init__(lagged_model, LAGGED_POLICY_FILE)
        self.every = every
        self.each_epoch = each_epoch
        self.sync_steps: list[int] = []
        self.epochs_done = 0

    def on_train_begin(self, args, state, control, **kwargs):
        self.epochs_done = math.floor(state.epoch or 0)  # a resumed run counts from its checkpoint's epoch

    def on_step_end(self, args, state, control, model=None, **kwargs):
        # With `each_epoch`, the authors' fairseq_cli/train.py (line 154) re-copies pi_tilde when an epoch starts: after
        # the last update of the epoch before, so a resumed run syncs where the uninterrupted one did.
        epoch_ended = self.each_epoch and math.floor(state.epoch) > self.epochs_done
        self.epochs_done = math.floor(state.epoch)
        if state.global_step % self.every == 0 or epoch_ended:
            if hasattr(self.model, "copy_from_policy"):  # a LoRA adapter beside the policy's: its weights only
                self.model.copy_from_policy()
            else:
                source = model.module if hasattr(model, "module") else model
                self.model.load_state_dict(source.state_dict())
            self.sync_steps.append(state.global_step)


def _untied(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """safetensors refuses tensors sharing memory (tied embeddings): store one copy of each storage."""
    seen: dict[int, str] = {}
    kept = {}
    for name, tensor in tensors.items():
        key = tensor.untyped_storage().data_ptr()
        if key in seen:
            continue
        seen[key] = name
        kept[name] = tensor
    return kept
