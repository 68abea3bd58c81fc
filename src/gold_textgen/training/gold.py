"""GOLD fine-tuning: from the MLE checkpoint of the same seed, with a fresh optimizer, a lagged policy
and (by default) cached rewards; see gold_trainer.py for the per-step mechanics."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd
from transformers import DataCollatorForSeq2Seq

from ..data.tokenization import load_tokenizer
from ..models.transformer import load_pretrained_model
from ..workflow.runtime import seed_everything
from .gold_trainer import GoldSettings, GoldTrainer, LaggedPolicySync, frozen_copy
from .reward_cache import RewardPaddingCollator, attach_cached_rewards
from .trainer import TrainingJob, build_trainer, configure_generation, load_splits, resume_from, run_and_save, training_arguments

log = logging.getLogger(__name__)


def train_gold(job: TrainingJob, mle_dir: Path, rewards_path: Path | None) -> dict:
    """GOLD fine-tuning from the MLE checkpoint of the same seed, with a fresh optimizer."""
    settings = job.task["gold"]
    gold = GoldSettings.from_config({**settings, **job.task["objectives"][job.objective]})
    seed_everything(job.seed)
    tokenizer = load_tokenizer(mle_dir)
    model = load_pretrained_model(mle_dir)
    configure_generation(model, job.task)
    lagged = frozen_copy(model)  # pi_tilde starts as the MLE model
    online = gold.reward != "delta" and gold.rewards == "online"
    reward_model = frozen_copy(model) if online else None
    train_set, valid_set = load_splits(job, tokenizer, settings["eval_max_examples"])
    if gold.reward != "delta" and gold.rewards == "cached":
        if rewards_path is None:
            raise ValueError("cached rewards need the reward cache of the MLE model (rule cache_rewards)")
        train_set = attach_cached_rewards(train_set, pd.read_parquet(rewards_path))
    checkpoint = resume_from(job, {"train": job.train_path, "valid": job.valid_path, "mle_model": mle_dir, "rewards": rewards_path})
    sync = LaggedPolicySync(lagged, gold.sync_every)
    if checkpoint:
        sync.restore(checkpoint)
    # The Trainer's own label smoother stays off: GOLD's loss adds its unweighted smoothing itself.
    arguments = training_arguments(settings, job, label_smoothing_factor=0.0, remove_unused_columns=False)
    collator = RewardPaddingCollator(DataCollatorForSeq2Seq(tokenizer, model=model))
    trainer = build_trainer(
        GoldTrainer,
        job,
        settings,
        model,
        tokenizer,
        (train_set, valid_set),
        collator,
        callbacks=(sync,),  # pi_tilde is part of every checkpoint
        arguments=arguments,
        gold=gold,
        lagged_model=lagged,
        reward_model=reward_model,
    )
    log.info("GOLD settings: %s", gold.to_dict())
    return run_and_save(trainer, job, {**settings, "gold": gold.to_dict()}, checkpoint)
