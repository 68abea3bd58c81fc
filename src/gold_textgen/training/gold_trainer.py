"""GOLD fine-tuning with the transformers Seq2SeqTrainer: the trainer only wires models to the pure
objective functions in objectives.py.

Per batch of references (teacher forcing):

1. the lagged policy pi_tilde (a copy of the policy, eval mode, no grad) gives w_t = max(u, pi_tilde(y_t));
2. the frozen MLE model's p_MLE(y_t) gives the reward terms, looked up from the cache written by the
   `cache_rewards` rule, or recomputed with a forward pass (`rewards: online`, the authors' way);
3. the returns Q_t sum the current and the next `horizon` reward terms (GOLD-delta: Q_t = 1);
4. the loss is -(1/N) sum_t w_t Q_t log pi_theta(y_t) (+ unweighted label smoothing), N being the number
   of reference tokens in the whole update (all gradient-accumulation micro-batches and devices).

pi_tilde starts as the MLE model and is re-synced to the policy every k optimizer updates by
`LaggedPolicySync`, which also stores it in every checkpoint so a resumed run continues with the same
pi_tilde. (Not TRL's GOLDTrainer, an unrelated distillation method.)
"""

from __future__ import annotations

import copy
import logging
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from transformers import PreTrainedModel, Seq2SeqTrainer, TrainerCallback

from ..objectives.gold import (
    after_eos_term,
    delta_returns,
    importance_weights,
    per_token_rewards,
    windowed_returns,
)
from ..objectives.weighted_nll import weighted_nll
from .samplers import EpochSeededSampling

log = logging.getLogger(__name__)
LAGGED_POLICY_FILE = "lagged_policy.safetensors"
REWARD_FIELD = "reward_logprobs"


@dataclass(frozen=True)
class GoldSettings:
    """The settings of one GOLD objective (paper symbols in brackets): a typed view of a task's validated
    `gold` block merged with one entry of its `objectives` (defaults and ranges are the schema's)."""

    reward: str  # delta (GOLD-delta), p (GOLD-p: log p_MLE) or s (GOLD-s: p_MLE)
    min_weight: float  # [u] floor of the importance weight
    floor: float  # [c] floor of each reward term
    baseline: float  # [b] return baseline; each of the horizon + 1 terms carries b / (horizon + 1)
    sync_every: int  # [k] optimizer updates between re-syncs of pi_tilde
    horizon: int  # future tokens in a return, besides the current one
    gamma: float  # discount inside the window
    label_smoothing: float  # [epsilon] unweighted, as in the authors' code
    rewards: str  # cached (looked up) or online (frozen MLE forward pass every step)

    @classmethod
    def from_config(cls, values: dict) -> GoldSettings:
        missing = sorted(set(cls.__dataclass_fields__) - set(values))
        if missing:
            raise ValueError(f"GOLD settings lack {', '.join(missing)}: pass the validated config (schema defaults filled in)")
        return cls(**{k: v for k, v in values.items() if k in cls.__dataclass_fields__})

    def to_dict(self) -> dict:
        return asdict(self)


def token_logprobs(model: PreTrainedModel, inputs: dict, labels: torch.Tensor) -> torch.Tensor:
    """log p(y_t | y_<t, x) of each reference token under `model`, [B, T] (0 at padding)."""
    logits = model(**inputs).logits.float()
    gathered = torch.log_softmax(logits, dim=-1).gather(-1, labels.clamp_min(0).unsqueeze(-1)).squeeze(-1)
    return gathered.masked_fill(labels.eq(-100), 0.0)


def frozen_copy(model: PreTrainedModel) -> PreTrainedModel:
    clone = copy.deepcopy(model)
    clone.eval()
    clone.requires_grad_(False)
    return clone


class GoldTrainer(EpochSeededSampling, Seq2SeqTrainer):
    """Seq2SeqTrainer whose training loss is GOLD's weighted NLL; evaluation is unchanged (dev metric
    by generation; the reported eval loss is the plain token-mean NLL)."""

    # compute_loss divides by the token count of the whole update, so the Trainer must not rescale again.
    loss_is_scaled_for_ga = True

    def __init__(self, *args, gold: GoldSettings, lagged_model: PreTrainedModel, reward_model: PreTrainedModel | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.gold = gold
        self.lagged_model = lagged_model
        self.reward_model = reward_model
        if gold.reward != "delta" and gold.rewards == "online" and reward_model is None:
            raise ValueError("online rewards need the frozen MLE reward model")
        # Make the Trainer count reference tokens over all accumulated micro-batches (num_items_in_batch).
        self.model_accepts_loss_kwargs = True
        self._gold_log = dict.fromkeys(("nll_sum", "weight_sum", "return_sum", "weights_at_u", "terms_at_c", "tokens"), 0.0)

    def _move_helpers(self, device: torch.device) -> None:
        for helper in (self.lagged_model, self.reward_model):
            if helper is not None and next(helper.parameters()).device != device:
                helper.to(device)

    def reward_token_probs(self, model_inputs: dict, labels: torch.Tensor, cached: torch.Tensor | None) -> torch.Tensor:
        if self.gold.rewards == "cached":
            if cached is None:
                raise ValueError(f"cached rewards requested but the batch has no '{REWARD_FIELD}' field")
            return cached.exp()
        with torch.no_grad():
            return token_logprobs(self.reward_model, model_inputs, labels).exp()

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs["labels"]
        cached = inputs.pop(REWARD_FIELD, None)
        if not model.training:  # evaluation: plain NLL, comparable across objectives
            outputs = model(**inputs)
            return (outputs.loss, outputs) if return_outputs else outputs.loss
        model_inputs = {k: v for k, v in inputs.items() if k != "labels"}  # no labels: no built-in loss
        mask = labels.ne(-100)
        self._move_helpers(labels.device)
        with torch.no_grad():
            weights = importance_weights(token_logprobs(self.lagged_model, model_inputs, labels), self.gold.min_weight)
        terms = None
        if self.gold.reward == "delta":
            returns = delta_returns(mask)
        else:
            probs = self.reward_token_probs(model_inputs, labels, cached)
            terms = per_token_rewards(probs, self.gold.reward, self.gold.floor, self.gold.baseline, self.gold.horizon)
            past_eos = after_eos_term(self.gold.baseline, self.gold.horizon)
            returns = windowed_returns(terms, mask, self.gold.horizon, self.gold.gamma, past_eos)
        outputs = model(**model_inputs)
        parts = weighted_nll(torch.log_softmax(outputs.logits.float(), dim=-1), labels, weights, returns, self.gold.label_smoothing)
        normaliser = num_items_in_batch if num_items_in_batch is not None else parts.num_tokens
        loss = parts.loss_sum / normaliser
        if self.args.average_tokens_across_devices and num_items_in_batch is not None:
            loss = loss * self.accelerator.num_processes  # DDP averages gradients over processes
        self._track(parts, weights, returns, terms, mask)
        return (loss, outputs) if return_outputs else loss

    def _track(self, parts, weights, returns, terms, mask) -> None:
        # Accumulate as tensors: converting to Python floats here would synchronise a GPU every step.
        stats = self._gold_log
        stats["nll_sum"] = stats["nll_sum"] + parts.nll_sum
        stats["weight_sum"] = stats["weight_sum"] + weights[mask].sum()
        stats["return_sum"] = stats["return_sum"] + returns[mask].sum()
        stats["weights_at_u"] = stats["weights_at_u"] + weights[mask].le(self.gold.min_weight).sum()
        if terms is not None:  # reward terms held up by the floor c (GOLD-delta has none)
            stats["terms_at_c"] = stats["terms_at_c"] + terms[mask].le(self.gold.floor).sum()
        stats["tokens"] = stats["tokens"] + parts.num_tokens

    def log(self, logs: dict, *args, **kwargs) -> None:
        stats = self._gold_log
        tokens = float(stats["tokens"])
        if tokens and "loss" in logs:
            logs["nll"] = float(stats["nll_sum"]) / tokens
            logs["mean_weight"] = float(stats["weight_sum"]) / tokens
            logs["mean_return"] = float(stats["return_sum"]) / tokens
            logs["share_weight_at_u"] = float(stats["weights_at_u"]) / tokens
            if self.gold.reward != "delta":
                logs["share_reward_at_c"] = float(stats["terms_at_c"]) / tokens
            self._gold_log = dict.fromkeys(stats, 0.0)
        super().log(logs, *args, **kwargs)


class LaggedPolicySync(TrainerCallback):
    """Copies the policy into pi_tilde every `every` optimizer updates, and keeps pi_tilde in checkpoints.

    The copy happens after update number k, 2k, ...: batches k+1 .. 2k are weighted by the policy as it
    was after update k. On resume, pi_tilde is loaded from the checkpoint it was saved with.
    """

    def __init__(self, lagged_model: PreTrainedModel, every: int):
        self.lagged_model = lagged_model
        self.every = every
        self.sync_steps: list[int] = []

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if state.global_step % self.every == 0:
            source = model.module if hasattr(model, "module") else model
            self.lagged_model.load_state_dict(source.state_dict())
            self.sync_steps.append(state.global_step)

    def on_save(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            folder.mkdir(parents=True, exist_ok=True)
            tensors = {k: v.detach().cpu().contiguous() for k, v in self.lagged_model.state_dict().items()}
            save_file(_untied(tensors), str(folder / LAGGED_POLICY_FILE))

    def restore(self, checkpoint: str | Path) -> None:
        """Load pi_tilde from a checkpoint, strictly: only the tied copies that `_untied` left out of the
        file may be missing, and they are checked by name."""
        path = Path(checkpoint) / LAGGED_POLICY_FILE
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: cannot resume GOLD training with the same pi_tilde")
        state = self.lagged_model.state_dict()
        tied = set(state) - set(_untied(state))
        result = self.lagged_model.load_state_dict(load_file(str(path)), strict=False)
        unexpected, untied_missing = result.unexpected_keys, sorted(set(result.missing_keys) - tied)
        if unexpected or untied_missing:
            raise ValueError(
                f"{path} does not match the model: missing {untied_missing or 'nothing'}, unexpected {unexpected or 'nothing'}"
            )
        log.info("restored pi_tilde from %s", path)


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
