"""The project's objectives as a loss for any transformers `Trainer`, TRL's `SFTTrainer` included: GOLD
(-delta, -p, -s), DFT, TaiLr, MixCE, loss truncation, ASFT, PSFT, iw-SFT, the probability family, EAFT and
plain NLL, computed by the very function the workflow's trainer uses (objective_loss.py), so a loss
here equals the workflow's on the same batch.

    loss = ObjectiveLoss("gold", reward="s", floor=0.1, min_weight=0.1, sync_every=100, reference_model=sft_model)
    trainer = SFTTrainer(model=policy, args=config, train_dataset=data, compute_loss_func=loss, callbacks=[loss.callback()])

The callback keeps what a loss needs beside the batch: the lagged policy pi_tilde (GOLD, PSFT's pi_old),
copied from the policy when training starts and every `sync_every` updates, and loss truncation's
running cut-off, both saved in every checkpoint and restored when training resumes from one. The frozen
`reference_model` (the SFT/MLE model the run starts from) gives GOLD-p/s and iw-SFT their per-token
rewards and ASFT its anchor; the workflow can read them from a cache instead, here they are computed
online. The helper models read the same inputs as the policy: a forward hook on the policy hands them
over, since a Trainer passes a loss function only the outputs and the labels.

Settings and their defaults are those of config.schema.yaml (the task's fine-tuning block and one
objective entry, from the loss catalog), label smoothing included: each loss's reference's own (0 for
DFT, ASFT, PSFT, iw-SFT, ...), the block's 0.1 for GOLD, TaiLr and plain NLL; pass `label_smoothing=` to
change it. ASFT, PSFT and iw-SFT run the policy's forward without dropout, as in the workflow. The policy
gradient's sampled updates need the workflow's decoders and rewards and are not offered here.
"""

from __future__ import annotations

import copy
from pathlib import Path

import torch
from transformers import PreTrainedModel, TrainerCallback

from ..objectives.loss_truncation import LossTruncation
from ..objectives.table import TokenBatch
from ..objectives.weighted_nll import reference_logprobs
from .checkpoint_state import TRUNCATION_STATE_FILE, LaggedPolicySync, StateInCheckpoints
from .dropout_state import forward_without_dropout
from .objective_loss import objective_terms
from .objective_settings import ObjectiveSettings


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
        if (self.settings.uses_rewards or self.settings.uses_anchor) and reference_model is None:
            raise ValueError(f"the loss '{loss}' reads the frozen model fine-tuning starts from: pass reference_model")
        self.reference_model = frozen(reference_model) if reference_model is not None else None
        self.lagged_model: PreTrainedModel | None = None
        self.truncation = None
        if "truncation" in self.settings.needs:
            self.truncation = LossTruncation(self.settings.drop_fraction, self.settings.warmup, self.settings.window)
        self.causal = causal
        self._inputs: dict | None = None

    def callback(self) -> ObjectiveCallback:
        """The TrainerCallback that keeps this loss's helpers (pass it in the Trainer's `callbacks`)."""
        return ObjectiveCallback(self)

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
        logits, labels = self.aligned(logits, labels)
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        if not torch.is_grad_enabled():  # evaluation: the plain token-mean NLL, comparable across objectives
            mask = labels.ne(-100)
            return -reference_logprobs(logprobs, labels)[mask].sum() / mask.sum().clamp_min(1)
        batch = TokenBatch(logprobs=logprobs, reference=reference_logprobs(logprobs, labels), mask=labels.ne(-100))
        self.add_helper_logprobs(batch, labels, logits.device)
        terms = objective_terms(batch, labels, self.settings, self)
        normaliser = num_items_in_batch if num_items_in_batch is not None else terms.parts.num_tokens
        return terms.loss_sum / normaliser

    def aligned(self, logits: torch.Tensor, labels: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Logits and the labels they score: a causal LM's logits at t score the token at t + 1."""
        if not self.causal:
            return logits, labels
        return logits[:, :-1], None if labels is None else labels[:, 1:]

    def add_helper_logprobs(self, batch: TokenBatch, labels: torch.Tensor, device: torch.device) -> None:
        settings = self.settings
        if not (settings.uses_lagged_policy or settings.uses_rewards or settings.uses_anchor):
            return
        if self._inputs is None:
            raise RuntimeError("the loss has not seen the policy's inputs: pass loss.callback() in the Trainer's callbacks")
        with torch.no_grad():
            if settings.uses_lagged_policy:
                if self.lagged_model is None:
                    raise RuntimeError("no lagged policy: pass loss.callback() in the Trainer's callbacks")
                batch.lagged = reference_logprobs(self.helper_logprobs(self.lagged_model, device), labels)
            if settings.uses_rewards:
                batch.mle = reference_logprobs(self.helper_logprobs(self.reference_model, device), labels)
            if settings.uses_anchor:
                batch.anchor = self.helper_logprobs(self.reference_model, device)

    def helper_logprobs(self, model: PreTrainedModel, device: torch.device) -> torch.Tensor:
        if next(model.parameters()).device != device:
            model.to(device)
        inputs = {key: value for key, value in self._inputs.items() if key not in ("labels", "num_items_in_batch")}
        logits, _ = self.aligned(model(**inputs).logits)
        return torch.log_softmax(logits.float(), dim=-1)


def frozen(model: PreTrainedModel) -> PreTrainedModel:
    model.eval()
    model.requires_grad_(False)
    return model


class ObjectiveCallback(TrainerCallback):
    """Keeps an ObjectiveLoss's helpers through training, checkpoints and resumes."""

    def __init__(self, loss: ObjectiveLoss):
        self.loss = loss
        self.sync: LaggedPolicySync | None = None
        self.truncation_state = StateInCheckpoints(loss.truncation, TRUNCATION_STATE_FILE) if loss.truncation is not None else None

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        self.loss.attach(model)
        resumed = Path(args.output_dir) / f"checkpoint-{state.global_step}" if state.global_step else None
        if self.loss.settings.uses_lagged_policy:
            self.loss.lagged_model = frozen(copy.deepcopy(model))
            self.sync = LaggedPolicySync(self.loss.lagged_model, self.loss.settings.sync_every, bool(self.loss.settings.sync_each_epoch))
            self.sync.on_train_begin(args, state, control)
            if resumed is not None:
                self.sync.restore(resumed)
        if self.truncation_state is not None and resumed is not None:
            self.truncation_state.restore(resumed)

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if self.sync is not None:
            self.sync.on_step_end(args, state, control, model=model)

    def on_save(self, args, state, control, **kwargs):
        for keeper in (self.sync, self.truncation_state):
            if keeper is not None:
                keeper.on_save(args, state, control)
