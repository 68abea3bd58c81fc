"""The project's objectives as a loss for any transformers `Trainer`: GOLD (-delta, -p, -s) and every other
loss of the catalog (catalog/; the policy gradient needs the workflow's sampling), computed by the
very function the workflow's trainer uses (objective_loss.py), so a loss here equals the workflow's on the
same batch. In TRL's SFTTrainer use `ObjectiveSFTTrainer(..., objective=loss)` (sft_trainer.py); in a
plain Trainer the loss is a `compute_loss_func` with its callback:

    loss = ObjectiveLoss("gold", reward="s", floor=0.1, min_weight=0.1, sync_every=100, reference_model=sft_model)
    trainer = Trainer(model=policy, args=arguments, train_dataset=data, compute_loss_func=loss, callbacks=[loss.callback()])

The callback builds what a loss needs beside the batch when training starts (helper_models.py, the
module the workflow's trainer builds its helpers with): the lagged policy pi_tilde (GOLD, PSFT's pi_old),
a new model holding the policy's starting weights, re-synced every `sync_every` updates, and loss
truncation's running cut-off, both saved in every checkpoint and restored when training resumes from one.
The frozen `reference_model` (the SFT/MLE model the run starts from, loaded separately; for a policy that
trains a LoRA adapter, by default its starting adapter) gives GOLD-p/s and iw-SFT their per-token rewards
and ASFT its anchor; the workflow can read them from a cache instead, here
they are computed online. With `compute_loss_func` the helper models read the policy's inputs through a
forward hook on the policy, since a Trainer passes a loss function only the outputs and the labels.

Settings and their defaults are those of config.schema.yaml (the task's fine-tuning block and one
objective entry, from the loss catalog), label smoothing included: each loss's reference's own, or the
block's 0.1 (docs/reference/objectives.md lists which); pass `label_smoothing=` to change it. A loss that
compares the policy with a frozen model runs the policy's forward without dropout, as in the workflow
(the catalog's `dropout`). The policy gradient's sampled updates need the workflow's decoders and rewards and are not offered here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

import torch
from transformers import PreTrainedModel, TrainerCallback

from ..models.lora import peft_model_in
from ..objectives.table import TokenBatch
from ..objectives.weighted_nll import reference_logprobs
from ..training.dropout_state import forward_without_dropout
from ..training.helper_models import HelperModels, frozen_model
from ..training.objective_loss import loss_step
from ..training.objective_settings import ObjectiveSettings


class ObjectiveLoss:
    """A `compute_loss_func(outputs, labels, num_items_in_batch)` for one objective. `causal`: the model is a
    decoder-only LM whose labels are its input ids (-100 on the prompt and padding), so logits at position
    t score label t + 1, as TRL's collators and `DataCollatorForLanguageModeling` lay them out; False for a
    seq2seq model, whose labels line up with its logits."""

    def __init__(self, loss: str = "gold", *, reference_model: PreTrainedModel | None = None, causal: bool = True, **settings):
        self.settings = ObjectiveSettings.with_defaults(loss=loss, **{"rewards": "online", **settings})
        if "sampling" in self.settings.needs:
            raise ValueError(f"the loss '{loss}' samples from the policy during training: run it through the workflow")
        if self.settings.rewards != "online":
            raise ValueError("outside the workflow the rewards come from reference_model every step: rewards must be 'online'")
        # rebuilt from its weights if its forward was patched (a copy of a model an SFTTrainer trained)
        self.reference_model = frozen_model(reference_model) if reference_model is not None else None
        self.helpers: HelperModels | None = None  # built from the policy's weights when training starts
        self.causal = causal
        self.capture_inputs = True  # a trainer that hands the inputs over itself (ObjectiveSFTTrainer) sets False
        self.helper_context: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext
        self._inputs: dict | None = None

    def use_reference_model(self, model: PreTrainedModel) -> None:
        """`model` as the frozen model (as `reference_model=` at construction): for a caller that loads it
        only once the loss's settings say it is read (`settings.uses_frozen_model`)."""
        self.reference_model = frozen_model(model)

    def callback(self) -> ObjectiveCallback:
        """The TrainerCallback that keeps this loss's helpers (pass it in the Trainer's `callbacks`)."""
        return ObjectiveCallback(self)

    def start(self, policy: PreTrainedModel) -> HelperModels:
        """The helpers of a run whose policy starts from `policy`'s weights: pi_tilde a new model holding
        them, the frozen model `reference_model`; for a policy that trains a LoRA adapter, two more adapters
        of its module (pi_tilde, and the starting adapter as the frozen model unless `reference_model`)."""
        settings = self.settings
        if (settings.uses_rewards or settings.uses_anchor) and self.reference_model is None and peft_model_in(policy) is None:
            raise ValueError(
                f"the loss '{settings.loss}' reads the frozen model fine-tuning starts from: pass reference_model "
                "(or train a LoRA adapter, whose starting adapter is then the frozen model)"
            )
        self.helpers = HelperModels.build(settings, policy, frozen=self.reference_model)
        return self.helpers

    def attach(self, model: torch.nn.Module) -> None:
        """Hand the policy's inputs to the helper models: a forward pre-hook keeps the latest call's. For a
        loss that compares the policy with a frozen model (ASFT, PSFT, iw-SFT) the policy's forward runs
        without dropout, as in the workflow's trainer."""

        def keep_inputs(module, args, kwargs):
            self._inputs = {"input_ids": args[0], **kwargs} if args else dict(kwargs)

        model.register_forward_pre_hook(keep_inputs, with_kwargs=True)
        if not self.settings.policy_dropout:
            forward_without_dropout(model)

    def __call__(self, outputs, labels: torch.Tensor, num_items_in_batch: torch.Tensor | int | None = None) -> torch.Tensor:
        logits = outputs["logits"] if isinstance(outputs, dict) else outputs.logits
        return self.from_logits(logits, labels, self._inputs, num_items_in_batch)

    def from_logits(
        self, logits: torch.Tensor, labels: torch.Tensor, inputs: dict | None, num_items_in_batch: torch.Tensor | int | None = None
    ) -> torch.Tensor:
        """The loss of the policy's `logits` for `labels`, its helpers reading the same model `inputs`."""
        logits, labels = self.aligned(logits, labels)
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        if not torch.is_grad_enabled():  # evaluation: the plain token-mean NLL, comparable across objectives
            mask = labels.ne(-100)
            return -reference_logprobs(logprobs, labels)[mask].sum() / mask.sum().clamp_min(1)
        batch = TokenBatch(logprobs=logprobs, reference=reference_logprobs(logprobs, labels), mask=labels.ne(-100))

        def fill_helpers(batch: TokenBatch) -> None:
            if self.helpers is None:
                raise RuntimeError(f"the loss '{self.settings.loss}' keeps helpers: pass loss.callback() in the Trainer's callbacks")
            if inputs is None:
                raise RuntimeError("the loss has not seen the policy's inputs: pass loss.callback() in the Trainer's callbacks")
            # the policy's inputs (a LoRA helper's forward through the policy's module passes its adapter too)
            model_inputs = {key: value for key, value in inputs.items() if key not in ("labels", "num_items_in_batch", "adapter_names")}
            with self.helper_context():
                self.helpers.fill(batch, model_inputs, labels, aligned=lambda helper_logits: self.aligned(helper_logits)[0])

        step = loss_step(
            batch, labels, self.settings, self.helpers, num_items_in_batch, fill_helpers=fill_helpers, inputs=inputs, causal=self.causal
        )
        return step.loss

    def aligned(self, logits: torch.Tensor, labels: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Logits and the labels they score: a causal LM's logits at t score the token at t + 1."""
        if not self.causal:
            return logits, labels
        return logits[:, :-1], None if labels is None else labels[:, 1:]


class ObjectiveCallback(TrainerCallback):
    """Builds an ObjectiveLoss's helpers when training starts (pi_tilde from the policy's weights), and keeps
    them through training, checkpoints and resumes."""

    def __init__(self, loss: ObjectiveLoss):
        self.loss = loss

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        if self.loss.capture_inputs:
            self.loss.attach(model)
        helpers = self.loss.start(model)
        if state.global_step:  # resumed: every helper's state as the checkpoint saved it
            helpers.restore(Path(args.output_dir) / f"checkpoint-{state.global_step}")
        for callback in helpers.callbacks:
            callback.on_train_begin(args, state, control, model=model, **kwargs)

    def on_step_end(self, args, state, control, model=None, **kwargs):
        for callback in self.loss.helpers.callbacks:
            callback.on_step_end(args, state, control, model=model, **kwargs)

    def on_save(self, args, state, control, **kwargs):
        for callback in self.loss.helpers.callbacks:
            callback.on_save(args, state, control, **kwargs)

    def on_train_end(self, args, state, control, **kwargs):
        self.loss.helpers.remove_adapters()  # a peft policy saved after training holds its own adapter alone
