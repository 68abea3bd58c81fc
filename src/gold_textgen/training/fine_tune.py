"""Fine-tuning from the MLE checkpoint of the same seed, with a fresh optimizer, on the task's `fine_tune`
schedule: GOLD (a lagged policy and, by default, cached rewards) or a peer objective; see
fine_tune_trainer.py for the per-step mechanics."""

from __future__ import annotations

import logging
from pathlib import Path

from transformers import DataCollatorForSeq2Seq

from ..data.seq2seq_batches import PaddedFieldsCollator
from ..data.tokenization import load_tokenizer
from ..evaluation import metrics
from ..evaluation.decoding import generation_config
from ..models.transformer import load_pretrained_model
from ..objectives.policy_gradient import RewardBaseline
from ..runtime.model_process import seed_everything
from .fine_tune_trainer import REWARD_FIELD, FineTuneTrainer
from .helper_models import HelperModels
from .objective_settings import ObjectiveSettings
from .on_policy import OnPolicySampling
from .reward_cache import attach_cached_rewards, read_reward_cache
from .training_job import TrainingJob, build_trainer, configure_generation, load_splits, resume_from, run_and_save, training_arguments

log = logging.getLogger(__name__)


def fine_tune(job: TrainingJob, start_dir: Path, rewards_path: Path | None) -> dict:
    """Fine-tune the model in `start_dir` (the MLE model of the job's seed, or the objective it starts
    from) with the job's objective."""
    settings = job.task["fine_tune"]
    objective = ObjectiveSettings.from_config({**settings, **job.task["objectives"][job.objective]})
    seed_everything(job.seed)
    tokenizer = load_tokenizer(start_dir)
    model = load_pretrained_model(start_dir)
    configure_generation(model, job.task)
    cached = objective.uses_rewards and objective.rewards == "cached"
    # REINFORCE on a copy model scores its samples with the source words their placeholders copy
    train_set, valid_set = load_splits(job, tokenizer, settings["eval_max_examples"], keep_oov_words="sampling" in objective.needs)
    if cached:
        if rewards_path is None:
            raise ValueError("cached rewards need the reward cache of the MLE model (rule cache_rewards)")
        train_set = attach_cached_rewards(train_set, read_reward_cache(rewards_path))
    checkpoint = resume_from(job, {"train": job.train_path, "valid": job.valid_path, "start_model": start_dir, "rewards": rewards_path})
    sampling = on_policy_sampling(job.task, objective, model, tokenizer) if "sampling" in objective.needs else None
    helpers = HelperModels.build(objective, model, sampling=sampling)  # pi_tilde and the frozen model: the start's weights
    if checkpoint:
        helpers.restore(checkpoint)
    # The Trainer's own label smoother stays off: the weighted loss adds its unweighted smoothing itself.
    arguments = training_arguments(settings, job, label_smoothing_factor=0.0, remove_unused_columns=False)
    collator = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer, model=model), label_fields=(REWARD_FIELD,))
    trainer = build_trainer(
        FineTuneTrainer,
        job,
        settings,
        model,
        tokenizer,
        (train_set, valid_set),
        collator,
        callbacks=tuple(helpers.callbacks),  # their state is part of every checkpoint
        arguments=arguments,
        helpers=helpers,
    )
    log.info("objective settings: %s", objective.to_dict())
    return run_and_save(trainer, job, {**settings, "objective": objective.to_dict()}, checkpoint)


def on_policy_sampling(task: dict, objective: ObjectiveSettings, model, tokenizer) -> OnPolicySampling:
    """Sampling with the decoders' code (pure sampling: top-k off), rewards by the task metric as the tables
    score it, and the objective's baseline. Samples come from the policy itself, limited by the maximum
    length only: a minimum length or a no-repeat n-gram rule would draw them from another distribution and
    bias REINFORCE's gradient (the task's rules apply when `sample_with_task_lengths` asks for them)."""
    decoder = {"do_sample": True, "top_k": 0}
    lengths = task["generation"]
    if not objective.sample_with_task_lengths:
        lengths = {**lengths, "min_new_tokens": 0, "no_repeat_ngram_size": 0}
    generation = generation_config(model, lengths, decoder)
    generation.num_return_sequences = objective.samples_per_input
    metric, scoring = objective.reward_metric or task["metric"], metrics.Scoring.of_task(task)

    def reward(hypotheses: list[str], references: list[str]):
        return metrics.sentence_rewards(metric, hypotheses, references, scoring)

    return OnPolicySampling(generation, tokenizer, reward, RewardBaseline(objective.baseline, objective.baseline_margin))
