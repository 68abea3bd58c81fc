"""The models an objective reads beside the policy, built and fed in one place for both training paths:
the workflow's `FineTuneTrainer` (fine_tune_trainer.py) and the library loss for any Trainer
(trainer_losses.py, sft_trainer.py).

- pi_tilde, the lagged policy (GOLD's importance weights, PSFT's pi_old): the starting weights, re-synced
  to the policy every `sync_every` updates by `LaggedPolicySync`, which also keeps it in checkpoints;
- the frozen starting model (the MLE/SFT model): online rewards p_MLE (GOLD-p/s, iw-SFT) and ASFT's anchor;
- loss truncation's running cut-off and the policy gradient's sampler, with their state in checkpoints.

A helper is always a new module built from the config and loaded with the weights, never `copy.deepcopy`
of a live model: another library may have patched that object. TRL's `SFTTrainer` sets an instance-level
`forward` on the policy (its fused LM head) that closes over the original object, a copy keeps it, and the
copy's forward then runs the policy's weights: pi_tilde and the "frozen" model would follow the policy
(every lagged objective silently becoming its no-lag variant). PEFT wrappers and `torch.compile` patch
objects the same way. A policy that trains a LoRA adapter (peft) gets its helpers as two more adapters of
its own module (`AdapterHelper`): one copy of the base weights in memory. A new kind of helper is a field
here, its construction in `build` and its forward pass in `fill`.
"""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch
from transformers import PreTrainedModel, TrainerCallback
from transformers.initialization import no_init_weights

from ..catalog import NEEDS
from ..checkpoints.checkpoint_state import (
    BASELINE_STATE_FILE,
    FROZEN_ADAPTER_FILE,
    TRUNCATION_STATE_FILE,
    LaggedPolicySync,
    StateInCheckpoints,
    WeightsInCheckpoints,
)
from ..models.lora import peft_model_in
from ..objectives.loss_truncation import LossTruncation
from ..objectives.table import TokenBatch
from .dropout_state import without_dropout
from .label_logprobs import helper_reference_logprobs
from .objective_settings import ObjectiveSettings
from .sharded_weights import refuse_sharded

log = logging.getLogger(__name__)
# The helper each need of the catalog asks for, by the name a caller passes it.
HELPER_ARGUMENTS = {
    "lagged_policy": "lagged (pi_tilde)",
    "mle_rewards": "frozen (the starting model, for online rewards)",
    "anchor": "frozen (the starting model)",
    "truncation": "truncation (LossTruncation)",
    "sampling": "sampling (OnPolicySampling)",
}


def patched_modules(model: torch.nn.Module) -> list[str]:
    """The modules of `model` whose `forward` is an instance attribute (set by TRL, PEFT, torch.compile,
    ...) rather than their class's method: a copy of such an object may run another object's weights."""
    return [name or type(model).__name__ for name, module in model.named_modules() if "forward" in vars(module)]


def model_from_weights(model: PreTrainedModel) -> PreTrainedModel:
    """A new model of `model`'s class and config holding a copy of each of its weights (parameters and
    buffers, persistent or not) in that weight's own dtype and on its device, in eval mode with no
    gradients. Nothing of the object itself is kept: no hooks, no patched forward, no shared storage;
    weights tied in `model` are tied in the copy. It is built on the meta device (no memory, no
    initialisation), so global random state is left as it was (a Trainer has already seeded it)."""
    model = getattr(model, "module", model)  # a DDP wrapper holds the model in .module
    if not isinstance(model, PreTrainedModel) or hasattr(model, "peft_config"):
        raise TypeError(f"cannot rebuild a {type(model).__name__} from its weights: pass a transformers PreTrainedModel")
    with torch.random.fork_rng(devices=[]), no_init_weights(), torch.device("meta"):
        clone = type(model)(copy.deepcopy(model.config))
    copies: dict[tuple, torch.Tensor] = {}

    def copied(tensor: torch.Tensor, parameter: bool) -> torch.Tensor:
        """One copy per viewed storage, so that tied weights share their copy as they share the original."""
        key = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape), tuple(tensor.stride()), parameter)
        if key not in copies:
            data = tensor.detach().clone()
            copies[key] = torch.nn.Parameter(data, requires_grad=False) if parameter else data
        return copies[key]

    with torch.no_grad():
        # setattr, not the module's dicts: recurrent layers keep their flat weight list up to date on it
        for name, tensor in model.named_parameters(remove_duplicate=False):
            owner, _, leaf = name.rpartition(".")
            setattr(clone.get_submodule(owner), leaf, copied(tensor, parameter=True))
        for name, tensor in model.named_buffers(remove_duplicate=False):
            owner, _, leaf = name.rpartition(".")
            setattr(clone.get_submodule(owner), leaf, copied(tensor, parameter=False))
    left = [name for name, tensor in [*clone.named_parameters(), *clone.named_buffers()] if tensor.is_meta]
    if left:
        raise ValueError(
            f"{type(model).__name__} rebuilt from its weights lacks {left[:3]}: they are neither parameters nor buffers of the model"
        )
    return clone.eval()


class AdapterHelper:
    """A helper model that is one more LoRA adapter of the policy's own module: the base weights are the
    policy's (one copy in memory), the adapter named `name` holds the helper's own low-rank weights, a copy
    of the policy's adapter when it is made. Its forward pass runs the policy's module with this adapter
    alone, in eval mode and without gradients (peft's mixed-batch inference, `adapter_names`); the policy's
    active adapter, and what trains, are unchanged. The adapter is left out of the model the run saves."""

    def __init__(self, policy: torch.nn.Module, name: str):
        self.policy = getattr(policy, "module", policy)  # a DDP wrapper holds the model in .module
        self.peft = peft = peft_model_in(self.policy)
        self.source, self.name = peft.active_adapter, name
        if name not in peft.peft_config:  # a Trainer resuming a peft model loads every adapter its checkpoint holds
            peft.add_adapter(name, copy.deepcopy(peft.peft_config[self.source]))
        # Each adapter's weights by their names without the adapter's (the same keys for every adapter),
        # looked up once: the tensors stay, and a forward pass asks for them every step.
        self.own, self.policy_adapter = self._tensors(name), self._tensors(self.source)
        for tensor in self.own.values():
            tensor.requires_grad_(False)
        self.copy_from_policy()
        if isinstance(self.policy, PreTrainedModel):  # save_pretrained drops these keys
            self.policy._keys_to_ignore_on_save = set(self.policy._keys_to_ignore_on_save or ()) | set(self._full_names)

    def _tensors(self, adapter: str) -> dict[str, torch.nn.Parameter]:
        marker = re.compile(rf"\.{re.escape(adapter)}(?=\.|$)")
        named = [(name, tensor) for name, tensor in self.policy.named_parameters() if marker.search(name)]
        if adapter == self.name:
            self._full_names = [name for name, _ in named]
        return {marker.sub("", name): tensor for name, tensor in named}

    def parameters(self) -> Iterator[torch.nn.Parameter]:
        return iter(self.own.values())

    def state_dict(self) -> dict[str, torch.Tensor]:
        return dict(self.own)

    def load_state_dict(self, state: dict[str, torch.Tensor], strict: bool = True):
        own = self.own
        missing, unexpected = sorted(set(own) - set(state)), sorted(set(state) - set(own))
        if strict and (missing or unexpected):
            raise ValueError(f"adapter weights do not match: missing {missing or 'nothing'}, unexpected {unexpected or 'nothing'}")
        with torch.no_grad():
            for key in set(own) & set(state):
                own[key].copy_(state[key])
        return torch.nn.modules.module._IncompatibleKeys(missing, unexpected)

    def copy_from_policy(self) -> None:
        """This adapter's weights := the policy's adapter's (pi_tilde's sync)."""
        self.load_state_dict(self.policy_adapter)

    def to(self, device) -> AdapterHelper:  # it lives in the policy's module, on its device
        return self

    def remove(self) -> None:
        """Delete the adapter from the policy's module (a peft model saves every adapter it holds)."""
        self.peft.delete_adapter(self.name)

    def __call__(self, **inputs):
        rows = next(value for value in inputs.values() if torch.is_tensor(value)).shape[0]
        with torch.no_grad(), without_dropout(self.policy):  # peft runs a named adapter in eval mode only
            return self.policy(**inputs, adapter_names=[self.name] * rows)


def shares_storage(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    storages = {p.untyped_storage().data_ptr() for p in a.parameters()}
    return any(p.untyped_storage().data_ptr() in storages for p in b.parameters())


@dataclass
class HelperModels:
    """The helpers of one objective (None where its loss does not need one) and the callbacks that keep
    their state in every checkpoint. `state` holds what a loss function reads across steps (loss
    truncation's cut-off as `state.truncation`): pass this object."""

    settings: ObjectiveSettings
    lagged: PreTrainedModel | None = None
    frozen: PreTrainedModel | None = None
    truncation: LossTruncation | None = None
    sampling: object | None = None  # OnPolicySampling: the workflow's REINFORCE updates
    callbacks: list[TrainerCallback] = field(default_factory=list, init=False)

    def __post_init__(self):
        settings = self.settings
        given = {"lagged_policy": self.lagged, "anchor": self.frozen, "truncation": self.truncation, "sampling": self.sampling}
        given["mle_rewards"] = self.frozen if settings.rewards == "online" else True  # cached rewards come with the batch
        missing = [need for need in HELPER_ARGUMENTS if need in settings.needs and given[need] is None]
        if missing:
            wanted = "; ".join(NEEDS[need] for need in missing)
            raise ValueError(f"loss {settings.loss} needs {wanted}: pass {', '.join(HELPER_ARGUMENTS[need] for need in missing)}")
        if self.lagged is not None:
            self.callbacks.append(LaggedPolicySync(self.lagged, settings.sync_every, bool(settings.sync_each_epoch)))
        if isinstance(self.frozen, AdapterHelper):  # the starting adapter: a resumed policy no longer holds it
            self.callbacks.append(WeightsInCheckpoints(self.frozen, FROZEN_ADAPTER_FILE))
        if self.truncation is not None:
            self.callbacks.append(StateInCheckpoints(self.truncation, TRUNCATION_STATE_FILE))
        if self.sampling is not None:
            self.callbacks.append(StateInCheckpoints(self.sampling.baseline, BASELINE_STATE_FILE))

    @classmethod
    def build(
        cls, settings: ObjectiveSettings, start: PreTrainedModel, frozen: PreTrainedModel | None = None, sampling=None
    ) -> HelperModels:
        """The helpers `settings.loss` needs for a run that starts from `start` (pi_tilde's first weights);
        the frozen model is `frozen` (rebuilt from its weights if its forward was patched) or `start`'s weights.
        A `start` that trains a LoRA adapter gets them as adapters of its own module (`AdapterHelper`)."""
        adapters = peft_model_in(start) is not None

        def helper(name: str):
            refuse_sharded(start, "policy", adapters)
            return AdapterHelper(start, name) if adapters else model_from_weights(start)

        lagged = helper("lagged_policy") if settings.uses_lagged_policy else None
        if not settings.uses_frozen_model:
            frozen = None
        elif frozen is None:
            frozen = helper("frozen_start")
        else:
            refuse_sharded(frozen, "frozen model")
            frozen = frozen_model(frozen, start)
        truncation = None
        if "truncation" in settings.needs:
            truncation = LossTruncation(settings.drop_fraction, settings.warmup, settings.window)
        return cls(settings, lagged, frozen, truncation, sampling)

    def remove_adapters(self) -> None:
        """Take the helpers' LoRA adapters out of the policy's module once training has ended, so that the
        model a caller saves holds the policy's adapter alone."""
        for helper in (self.lagged, self.frozen):
            if isinstance(helper, AdapterHelper):
                helper.remove()

    def restore(self, checkpoint) -> None:
        """Resume every helper's state from a checkpoint of the run."""
        for callback in self.callbacks:
            callback.restore(checkpoint)

    def to(self, device: torch.device) -> None:
        for helper in (self.lagged, self.frozen):
            if helper is not None and next(helper.parameters()).device != device:
                helper.to(device)

    def fill(
        self,
        batch: TokenBatch,
        inputs: dict,
        labels: torch.Tensor,
        cached: torch.Tensor | None = None,
        aligned: Callable[[torch.Tensor], torch.Tensor] = lambda logits: logits,
    ) -> None:
        """Add to `batch` what the loss reads of the helpers on these model `inputs` (no labels among them):
        pi_tilde's log-probs of the reference tokens, p_MLE's (the `cached` [B, T] ones where the rewards are
        cached), the frozen model's whole distribution. `aligned` maps a helper's logits onto the positions
        of `labels` (a causal LM's logits at t score the token at t + 1)."""
        settings = self.settings
        if settings.uses_lagged_policy or settings.uses_rewards or settings.uses_anchor:
            self.to(labels.device)

        def logprobs(model: PreTrainedModel) -> torch.Tensor:
            return torch.log_softmax(aligned(model(**inputs).logits).float(), dim=-1)

        with torch.no_grad():
            if settings.uses_lagged_policy:
                batch.lagged = helper_reference_logprobs(self.lagged, inputs, labels, logprobs)
            if settings.uses_rewards and settings.rewards == "cached":
                if cached is None:
                    raise ValueError("cached rewards requested but the batch carries none: attach the reward cache to the training set")
                batch.mle = cached
            elif settings.uses_rewards:
                batch.mle = helper_reference_logprobs(self.frozen, inputs, labels, logprobs)
            if settings.uses_anchor:
                batch.anchor = logprobs(self.frozen)


def frozen_model(model: PreTrainedModel, policy: torch.nn.Module | None = None) -> PreTrainedModel:
    """`model` as a frozen helper: rebuilt from its weights when its forward was patched (a copy of a model
    that TRL's SFTTrainer trained runs the original's weights), refused when it is the policy itself."""
    if policy is not None and (model is policy or shares_storage(model, policy)):
        raise ValueError("the frozen reference model shares its weights with the policy: load it separately or pass a copy")
    patched = patched_modules(model)
    if patched:
        log.info("the reference model's forward is patched (%s): rebuilt from its weights", ", ".join(patched[:3]))
        return model_from_weights(model)
    model.eval()
    model.requires_grad_(False)
    return model
