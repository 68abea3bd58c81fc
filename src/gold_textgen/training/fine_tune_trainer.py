"""Fine-tuning with the transformers Seq2SeqTrainer: the trainer only wires models to the pure objective
functions in objectives/ (GOLD, and every other loss of the catalog in catalog/, plain
NLL as the control among them). It runs the forward passes a loss needs and hands them to the step's loss
(`objective_loss.loss_step`), which reads the loss's weights and extra term from `objectives.table.LOSSES`.

Per batch of references (teacher forcing), for GOLD:

1. the lagged policy pi_tilde (a copy of the policy, eval mode, no grad) gives w_t = max(u, pi_tilde(y_t));
2. the frozen MLE model's p_MLE(y_t) gives the reward terms, looked up from the cache written by the
   `cache_rewards` rule, or recomputed with a forward pass (`rewards: online`, the authors' way);
3. the returns Q_t sum the current and the next `horizon` reward terms (GOLD-delta: Q_t = 1);
4. the loss is -(1/N) sum_t w_t Q_t log pi_theta(y_t) (+ unweighted label smoothing), N being the number
   of reference tokens in the whole update (all gradient-accumulation micro-batches and devices).

pi_tilde starts as the MLE model and is re-synced to the policy every k optimizer updates by
`LaggedPolicySync` (checkpoint_state.py), which also stores it in every checkpoint so a resumed run
continues with the same pi_tilde (PSFT's pi_old is the same copy). (Not TRL's GOLDTrainer, an unrelated
distillation method.) The other objectives weight each token by a function of the current policy's own
distribution (one forward pass), drop whole examples, or add a term of their own.
"""

from __future__ import annotations

import logging

import torch
from transformers import Seq2SeqTrainer

from ..checkpoints.checkpoint_loading import KnownMissingKeys
from ..objectives.policy_gradient import is_policy_gradient_update, reinforce_loss_sum
from ..objectives.table import TokenBatch
from ..objectives.weighted_nll import reference_logprobs
from .dev_generation import StopsInDevGeneration
from .dropout_state import dropout_as_the_loss_compares
from .helper_models import HelperModels
from .label_logprobs import policy_token_batch, with_labels_if_read_cheaply
from .objective_loss import ObjectiveTerms, for_gradient_averaging, loss_step
from .plateau_schedule import PlateauScheduled
from .samplers import EpochSeededSampling
from .token_statistics import TokenStatistics

log = logging.getLogger(__name__)
LOGGED_SUMS = ("nll_sum", "weight_sum", "return_sum", "weights_at_u", "terms_at_c", "tokens", "reward_sum", "baseline_sum", "samples")
REWARD_FIELD = "reward_logprobs"


class FineTuneTrainer(StopsInDevGeneration, TokenStatistics, PlateauScheduled, KnownMissingKeys, EpochSeededSampling, Seq2SeqTrainer):
    """Seq2SeqTrainer whose training loss is a weighted NLL (GOLD's, or a peer objective's); evaluation is
    unchanged (dev metric by generation; the reported eval loss is the plain token-mean NLL)."""

    # compute_loss divides by the token count of the whole update, so the Trainer must not rescale again.
    loss_is_scaled_for_ga = True

    def __init__(self, *args, helpers: HelperModels, **kwargs):
        """`helpers`: the models and state the objective reads beside the policy (helper_models.py); their
        checkpoint callbacks are added to `callbacks` unless it has them already (the workflow places them
        before the completion marker: a checkpoint is complete once their state is in it)."""
        callbacks = list(kwargs.pop("callbacks", None) or ())
        callbacks += [callback for callback in helpers.callbacks if all(callback is not other for other in callbacks)]
        super().__init__(*args, callbacks=callbacks, **kwargs)
        self.helpers = helpers
        self.objective = helpers.settings
        self.update_kinds: dict[int, str] = {}  # optimizer update -> "references" or "samples"
        # Make the Trainer count reference tokens over all accumulated micro-batches (num_items_in_batch).
        self.model_accepts_loss_kwargs = True
        self._objective_log = dict.fromkeys(LOGGED_SUMS, 0.0)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs["labels"]
        cached = inputs.pop(REWARD_FIELD, None)
        if not model.training:  # evaluation: plain NLL, comparable across objectives
            outputs = model(**inputs)
            return (outputs.loss, outputs) if return_outputs else outputs.loss
        if "sampling" in self.objective.needs and is_policy_gradient_update(self.state.global_step):
            self.update_kinds[self.state.global_step] = "samples"
            return self.policy_gradient_loss(model, inputs, return_outputs)
        self.update_kinds[self.state.global_step] = "references"
        model_inputs = {k: v for k, v in inputs.items() if k != "labels"}  # no labels: no built-in loss
        policy = self.accelerator.unwrap_model(model)
        forward_inputs = with_labels_if_read_cheaply(policy, model_inputs, labels, table=self.objective.reads_distribution)
        with dropout_as_the_loss_compares(model, self.objective):
            outputs = model(**forward_inputs)

        def fill_helpers(batch: TokenBatch) -> None:
            # The helpers run in the policy's precision: accelerate wraps only the prepared policy's forward in
            # the mixed-precision autocast, so without this a bf16 job would run their forward passes in fp32.
            with self.accelerator.autocast():
                self.helpers.fill(batch, model_inputs, labels, cached)

        step = loss_step(
            policy_token_batch(outputs, labels),
            labels,
            self.objective,
            self.helpers,
            num_items_in_batch,
            fill_helpers=fill_helpers,
            model_term=lambda mask: self.model_terms(model, outputs, mask),
        )
        loss = for_gradient_averaging(self, step.loss, num_items_in_batch)
        self._track(step.terms, step.mask)
        self.record_outputs(outputs, labels)
        return (loss, outputs) if return_outputs else loss

    def model_terms(self, model, outputs, mask: torch.Tensor) -> torch.Tensor | float:
        """A loss term the model itself adds to every objective (the pointer-generator's coverage loss)."""
        if getattr(outputs, "coverage_losses", None) is None:
            return 0.0
        return self.accelerator.unwrap_model(model).coverage_term(outputs.coverage_losses, mask)

    def policy_gradient_loss(self, model, inputs: dict, return_outputs: bool = False):
        """REINFORCE on samples of the current policy for this batch's inputs, scored against its references:
        -(1/S) sum_s (R_s - b) sum_t log pi(y^s_t), averaged over the micro-batches of the update."""
        sampling = self.helpers.sampling
        samples = sampling.draw(self.accelerator.unwrap_model(model), inputs, inputs["labels"])
        outputs = model(**samples.encoder_inputs, decoder_input_ids=samples.decoder_input_ids)
        sampled = reference_logprobs(torch.log_softmax(outputs.logits.float(), dim=-1), samples.labels)
        baseline = sampling.baseline.value
        loss_sum = reinforce_loss_sum(sampled, samples.labels.ne(-100), samples.rewards, baseline)
        loss = loss_sum / samples.rewards.numel() / self.args.gradient_accumulation_steps
        sampling.baseline.record(float(samples.rewards.mean()))
        stats = self._objective_log
        stats["reward_sum"] = stats["reward_sum"] + samples.rewards.sum()
        stats["baseline_sum"] = stats["baseline_sum"] + baseline * samples.rewards.numel()
        stats["samples"] = stats["samples"] + samples.rewards.numel()
        return (loss, outputs) if return_outputs else loss

    def _track(self, objective: ObjectiveTerms, mask: torch.Tensor) -> None:
        # Accumulate as tensors: converting to Python floats here would synchronise a GPU every step.
        parts, weights, returns, terms = objective.parts, objective.weights, objective.returns, objective.terms
        stats = self._objective_log
        stats["nll_sum"] = stats["nll_sum"] + parts.nll_sum
        stats["weight_sum"] = stats["weight_sum"] + weights[mask].sum()
        stats["return_sum"] = stats["return_sum"] + returns[mask].sum()
        if self.objective.min_weight is not None:  # weights held up by the floor u (GOLD, TaiLr)
            stats["weights_at_u"] = stats["weights_at_u"] + weights[mask].le(self.objective.min_weight).sum()
        if terms is not None:  # reward terms held up by the floor c (GOLD-p and GOLD-s only)
            stats["terms_at_c"] = stats["terms_at_c"] + terms[mask].le(self.objective.floor).sum()
        stats["tokens"] = stats["tokens"] + parts.num_tokens

    def log(self, logs: dict, *args, **kwargs) -> None:
        stats = self._objective_log
        tokens = float(stats["tokens"])
        if tokens and "loss" in logs:
            logs["nll"] = float(stats["nll_sum"]) / tokens
            logs["mean_weight"] = float(stats["weight_sum"]) / tokens
            logs["mean_return"] = float(stats["return_sum"]) / tokens
            if self.objective.min_weight is not None:
                logs["share_weight_at_u"] = float(stats["weights_at_u"]) / tokens
            if self.objective.uses_gold_returns:
                logs["share_reward_at_c"] = float(stats["terms_at_c"]) / tokens
        samples = float(stats["samples"])
        if samples and "loss" in logs:
            logs["mean_sample_reward"] = float(stats["reward_sum"]) / samples
            logs["reward_baseline"] = float(stats["baseline_sum"]) / samples
        if "loss" in logs:
            self._objective_log = dict.fromkeys(stats, 0.0)
        super().log(logs, *args, **kwargs)
