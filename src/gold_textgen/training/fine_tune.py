"""Fine-tuning from the MLE checkpoint of the same seed, with a fresh optimizer, on the task's `gold`
schedule: GOLD (a lagged policy and, by default, cached rewards) or a peer objective; see
fine_tune_trainer.py for the per-step mechanics."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd
from transformers import DataCollatorForSeq2Seq

from ..data.tokenization import load_tokenizer
from ..models.transformer import load_pretrained_model
from ..objectives.loss_truncation import LossTruncation
from ..workflow.runtime import seed_everything
from .fine_tune_trainer import FineTuneTrainer, LaggedPolicySync, LossTruncationState, ObjectiveSettings, frozen_copy
from .reward_cache import RewardPaddingCollator, attach_cached_rewards
from .trainer import TrainingJob, build_trainer, configure_generation, load_splits, resume_from, run_and_save, training_arguments

log = logging.getLogger(__name__)


def fine_tune(job: TrainingJob, mle_dir: Path, rewards_path: Path | None) -> dict:
    """Fine-tune the MLE model of the job's seed with the job's objective."""
    settings = job.task["gold"]
    objective = ObjectiveSettings.from_config({**settings, **job.task["objectives"][job.objective]})
    seed_everything(job.seed)
    tokenizer = load_tokenizer(mle_dir)
    model = load_pretrained_model(mle_dir)
    configure_generation(model, job.task)
    cached = objective.uses_rewards and objective.rewards == "cached"
    train_set, valid_set = load_splits(job, tokenizer, settings["eval_max_examples"])
    if cached:
        if rewards_path is None:
            raise ValueError("cached rewards need the reward cache of the MLE model (rule cache_rewards)")
        train_set = attach_cached_rewards(train_set, pd.read_parquet(rewards_path))
    checkpoint = resume_from(job, {"train": job.train_path, "valid": job.valid_path, "mle_model": mle_dir, "rewards": rewards_path})
    helpers, state_callbacks = {}, []
    if objective.uses_lagged_policy:
        helpers["lagged_model"] = frozen_copy(model)  # pi_tilde starts as the MLE model
        state_callbacks.append(LaggedPolicySync(helpers["lagged_model"], objective.sync_every))
    if objective.uses_rewards and objective.rewards == "online":
        helpers["reward_model"] = frozen_copy(model)
    if objective.loss == "loss_truncation":
        helpers["truncation"] = LossTruncation(objective.drop_fraction, objective.warmup, objective.window)
        state_callbacks.append(LossTruncationState(helpers["truncation"]))
    if checkpoint:
        for callback in state_callbacks:
            callback.restore(checkpoint)
    # The Trainer's own label smoother stays off: the weighted loss adds its unweighted smoothing itself.
    arguments = training_arguments(settings, job, label_smoothing_factor=0.0, remove_unused_columns=False)
    collator = RewardPaddingCollator(DataCollatorForSeq2Seq(tokenizer, model=model))
    trainer = build_trainer(
        FineTuneTrainer,
        job,
        settings,
        model,
        tokenizer,
        (train_set, valid_set),
        collator,
        callbacks=tuple(state_callbacks),  # their state is part of every checkpoint
        arguments=arguments,
        gold=objective,
        **helpers,
    )
    log.info("objective settings: %s", objective.to_dict())
    return run_and_save(trainer, job, {**settings, "objective": objective.to_dict()}, checkpoint)
