"""The objectives in TRL's `SFTTrainer`, the way TRL's maintainers ask for a custom loss from TRL 1.16 on:
a subclass that overrides `compute_loss` (their customization guide, "Change the training objective").
`compute_loss_func` is deprecated there (removed in TRL 2.0) and costs an extra forward pass a step,
since TRL's own loss no longer builds the logits; it still works for a plain transformers `Trainer`.

    objective = ObjectiveLoss("gold", reward="s", floor=0.1, min_weight=0.1, sync_every=10, reference_model=sft_model)
    trainer = ObjectiveSFTTrainer(model=policy, args=SFTConfig(...), train_dataset=data, processing_class=tokenizer, objective=objective)

One forward pass of the policy a training step, with the full logits the objective reads; the helper
models (pi_tilde, the frozen SFT model) read the same inputs; TRL's own statistics of the step (entropy
and top-1 accuracy over the completion tokens, tokens seen) come from the same logits. Evaluation is
TRL's own (the plain token-mean NLL, comparable across objectives). Tested with TRL 1.16 and
transformers 5.24 (the versions `pip install -e '.[dev]'` takes; CI tests the installed ones).
"""

from __future__ import annotations

import torch
from trl import SFTTrainer

from ..training.dropout_state import dropout_as_the_loss_compares
from ..training.objective_loss import for_gradient_averaging
from .trainer_losses import ObjectiveLoss


def refuse_cut_examples(config, settings) -> None:
    """Raise ValueError where SFTConfig `config` packs with the 'wrapped' strategy, which cuts examples
    mid-sequence, for a loss whose terms read the tokens after each one up to its example's end (GOLD's
    returns, loss truncation's per-example loss): the cut would change the loss, not only the context."""
    if config.packing and config.packing_strategy == "wrapped" and settings.reads_past_the_token:
        raise ValueError(
            f"packing_strategy 'wrapped' cuts examples mid-sequence, which changes the loss '{settings.loss}' (its terms "
            "read the tokens after each one, up to the example's end): pack with 'bfd' (TRL's default), which keeps "
            "each example whole up to max_length, as without packing"
        )


class ObjectiveSFTTrainer(SFTTrainer):
    """SFTTrainer whose training loss is `objective` (an ObjectiveLoss); everything else is TRL's."""

    def __init__(self, *args, objective: ObjectiveLoss, callbacks=None, **kwargs):
        if kwargs.get("compute_loss_func") is not None:
            raise ValueError("pass the loss as objective=, not compute_loss_func")
        config = kwargs.get("args") if "args" in kwargs else (args[1] if len(args) > 1 else None)
        if config is not None and (config.loss_type != "nll" or config.label_smoothing_factor):
            raise ValueError(
                "the objective is the whole loss: leave SFTConfig's loss_type 'nll' and label_smoothing_factor 0 "
                "(pass label_smoothing= to ObjectiveLoss)"
            )
        if config is not None:
            refuse_cut_examples(config, objective.settings)
        objective.capture_inputs = False  # compute_loss hands the inputs over
        super().__init__(*args, callbacks=[objective.callback(), *(callbacks or ())], **kwargs)  # its syncs first
        objective.helper_context = self.accelerator.autocast  # the helpers in the policy's mixed precision
        self.objective = objective
        # The loss divides by the update's tokens (`num_items_in_batch`), which the Trainer counts, and leaves
        # unscaled by the accumulation steps, only for a model it believes takes loss kwargs; for a model class
        # that does not, the update would be a mean of micro-batch means. compute_loss builds the model's
        # inputs itself, so the model's forward never receives them.
        self.model_accepts_loss_kwargs = True

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if not model.training:
            return super().compute_loss(model, inputs, return_outputs=return_outputs, num_items_in_batch=num_items_in_batch)
        inputs["use_cache"] = False  # as TRL's own compute_loss: no cache in training
        labels = inputs["labels"]
        model_inputs = {key: value for key, value in inputs.items() if key != "labels"}
        # compared with a frozen model in eval mode, ASFT, PSFT and iw-SFT run the policy without dropout
        with dropout_as_the_loss_compares(model, self.objective.settings):
            outputs = model(**model_inputs)
        loss = self.objective.from_logits(outputs.logits, labels, model_inputs, num_items_in_batch)
        loss = for_gradient_averaging(self, loss, num_items_in_batch)
        self.record_statistics(outputs.logits.detach(), labels, inputs)
        return (loss, outputs) if return_outputs else loss

    def record_statistics(self, logits: torch.Tensor, labels: torch.Tensor, inputs: dict) -> None:
        """TRL's statistics of a training step, as its compute_loss records them, from this step's logits:
        the entropy of the policy and its top-1 accuracy, averaged over the completion tokens, and the
        tokens seen so far."""
        logits, labels = logits[:, :-1].float(), labels[:, 1:]
        mask = labels.ne(-100)
        logprobs = torch.log_softmax(logits, dim=-1)
        entropy = -(logprobs.exp() * logprobs).sum(-1)[mask].sum()
        correct = logits.argmax(-1).eq(labels)[mask].sum()
        gather = self.accelerator.gather_for_metrics
        valid = gather(mask.sum()).sum()
        metrics = self._metrics["train"]
        metrics["entropy"].append((gather(entropy).sum() / valid).item() if valid > 0 else 0.0)
        metrics["mean_token_accuracy"].append((gather(correct).sum() / valid).item() if valid > 0 else 0.0)
        # tokens seen as TRL counts them: the attention mask's, or a padding-free row's whole width
        if "attention_mask" in inputs:
            seen = inputs["attention_mask"].sum()
        else:
            seen = torch.tensor(inputs["position_ids"].size(1), device=inputs["position_ids"].device)
        self._total_train_tokens += gather(seen).sum().item() // self.get_tp_size()
        metrics["num_tokens"] = [self._total_train_tokens]
