"""What every training job shares, MLE (mle.py) and fine-tuning with any objective (fine_tune.py): the job's
description (`TrainingJob`), training arguments, dev metric, checkpoint selection, resuming and the
atomic write of the best model; the trainer classes themselves are MleTrainer and FineTuneTrainer.

The dev metric (BLEU or ROUGE-2 of greedy decodes) picks the best checkpoint, never the loss: GOLD raises
NLL while improving outputs, so loss-based selection would pick the wrong model (the authors' README warns
about exactly this).
"""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml
from transformers import (
    EarlyStoppingCallback,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
)

from ..checkpoints.resuming import CheckpointCompletion, claim_checkpoints, discard_checkpoints, run_identity
from ..config.views import is_causal
from ..data.copy_vocabulary import copy_vocabulary_of
from ..data.seq2seq_batches import references_cut, tokenize_records
from ..data.token_features import input_features
from ..evaluation import metrics
from ..evaluation.decoding import apply_length_settings, clean_generation_config
from ..evaluation.stop_sequences import text_before_stop
from ..models.position_limit import check_position_limit
from ..models.transformer import count_parameters
from ..runtime.files import atomic_directory, atomic_open, read_jsonl, write_json
from ..runtime.model_process import is_main_process, pick_device
from ..runtime.provenance import provenance
from . import plateau_schedule as plateau
from .divergence import DivergenceGuard

log = logging.getLogger(__name__)


@dataclass
class TrainingJob:
    """Everything one training rule hands to the package."""

    task: dict  # resolved task settings (config.task_config)
    objective: str
    seed: int
    train_path: Path
    valid_path: Path
    tokenizer_path: Path | None  # None for pretrained models, which bring their tokenizer
    output_dir: Path
    checkpoint_dir: Path
    repo_dir: Path
    callbacks: tuple = ()  # extra TrainerCallbacks (progress reporting, experiment trackers, ...)
    log_dir: Path | None = None  # where the training logger writes (results/<experiment>/runs/{task}/{objective}/seed{seed})
    logger: str = "none"  # the Trainer's report_to: tensorboard, none, wandb, ...
    code_version: str | None = None  # digest of the code the job runs (the rule's `code` param), for provenance
    run_name: str | None = None  # the run's name in W&B, MLflow, TensorBoard: task/objective/seed<n>
    run_group: str | None = None  # the runs' group there: the experiment whose models these are


def mixed_precision(precision: str, device_type: str) -> dict[str, bool]:
    """Trainer flags for `precision`; mixed precision needs CUDA, so a CPU run (a GPU config tried on a
    laptop, a test) trains in fp32 and says so in its log."""
    if precision == "fp32":
        return {}
    if device_type != "cuda":
        log.warning("precision %s needs a CUDA device; this %s run trains in fp32", precision, device_type)
        return {}
    return {precision: True}


def accumulation_steps(settings: dict, processes: int) -> int:
    """Micro-batches per optimizer update: `gradient_accumulation_steps`, or, with `tokens_per_update`,
    the number that makes processes x max_tokens x steps equal that budget (fairseq's GPUs x max-tokens x
    update-freq), so the recipe's tokens per update hold whatever number of GPUs the job gets."""
    budget = settings.get("tokens_per_update")
    if budget is None:
        return settings["gradient_accumulation_steps"]
    per_micro_batch = settings["max_tokens"] * processes
    if budget % per_micro_batch:
        raise ValueError(
            f"tokens_per_update {budget} is not a multiple of max_tokens {settings['max_tokens']} x {processes} processes; "
            "choose a GPU count that divides it"
        )
    return budget // per_micro_batch


def world_size() -> int:
    """Processes of this training run (torchrun and accelerate set WORLD_SIZE; 1 otherwise)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def name_in_trackers(job: TrainingJob) -> None:
    """The experiment as the group of its runs in W&B and MLflow (whose callbacks read the environment),
    unless the user's environment names one already; each job is its own process."""
    if job.run_group:
        os.environ.setdefault("WANDB_RUN_GROUP", job.run_group)
        os.environ.setdefault("MLFLOW_EXPERIMENT_NAME", job.run_group)


def training_arguments(settings: dict, job: TrainingJob, **overrides) -> Seq2SeqTrainingArguments:
    if job.logger == "tensorboard" and job.log_dir is not None:
        # transformers 5 takes TensorBoard's folder from the environment only; each job is its own process.
        os.environ["TENSORBOARD_LOGGING_DIR"] = str(job.log_dir)
    name_in_trackers(job)
    metric = job.task["metric"]
    device = pick_device()
    values = dict(
        output_dir=str(job.checkpoint_dir),
        run_name=job.run_name,
        seed=job.seed,
        data_seed=job.seed,
        learning_rate=settings["learning_rate"],
        lr_scheduler_type=plateau.STAND_IN if settings["lr_scheduler"] == plateau.NAME else settings["lr_scheduler"],
        warmup_steps=settings["warmup_steps"],
        weight_decay=settings["weight_decay"],
        adam_beta2=settings["adam_beta2"],
        per_device_train_batch_size=settings["batch_size"],
        per_device_eval_batch_size=settings["batch_size"],
        gradient_accumulation_steps=accumulation_steps(settings, world_size()),
        max_steps=settings["max_steps"],
        label_smoothing_factor=settings["label_smoothing"],
        max_grad_norm=settings["max_grad_norm"],
        eval_strategy="steps",
        eval_steps=settings["eval_steps"],
        save_strategy="steps",
        save_steps=settings["eval_steps"],
        # Old checkpoints are removed by CheckpointCompletion once the newest is complete, not by the Trainer
        # (which rotates before the completion marker is written: see checkpoints.py).
        save_total_limit=None,
        load_best_model_at_end=settings["keep"] == "best",
        # A resumed run continues the early-stopping count where it stopped, as the uninterrupted run does.
        restore_callback_states_from_checkpoint=True,
        metric_for_best_model=metric,
        greater_is_better=True,
        predict_with_generate=True,
        logging_steps=max(1, settings["eval_steps"] // 5),
        logging_nan_inf_filter=False,  # a NaN loss is logged as NaN, and DivergenceGuard stops the run
        report_to=job.logger,
        use_cpu=device.type == "cpu",
        dataloader_num_workers=0,
        # Batches of similar length waste less compute on padding (lengths vary 4..30 words in the demo).
        train_sampling_strategy="group_by_length" if settings["group_by_length"] else "random",
        disable_tqdm=False,
        **mixed_precision(settings["precision"], device.type),
    )
    return Seq2SeqTrainingArguments(**(values | overrides))


def compute_metrics_fn(tokenizer: PreTrainedTokenizerBase, metric: str, scoring: metrics.Scoring, stop_sequences=()):
    """Decode generated ids and labels, then score them with the task metric. A copy model's placeholders
    become one-word stand-ins on both sides (the Trainer hands over ids without their sources); outputs end
    before the first stop sequence, as the evaluation's do."""
    copying = copy_vocabulary_of(tokenizer)

    def decode(ids: np.ndarray, stops=()) -> list[str]:
        rows = np.where(ids < 0, tokenizer.pad_token_id, ids).tolist()
        texts = [text_before_stop(tokenizer, row, stops) for row in rows]
        return texts if copying is None else [copying.restore(text, None) for text in texts]

    def compute(prediction) -> dict[str, float]:
        hypotheses = decode(prediction.predictions, stop_sequences)
        references = decode(prediction.label_ids)
        return {metric: metrics.task_metric(metric, hypotheses, references, scoring)}

    return compute


def configure_generation(model: PreTrainedModel, task: dict) -> None:
    """Dev evaluation decodes with the task's dev decoder (`dev_search`: greedy by default, the paper's
    test beam in configs/paper.yaml, as the authors validated), the task's length settings, which must fit
    the model's position table (checked here, before any update), and its stop sequences."""
    check_position_limit(model, task)
    model.generation_config = config = clean_generation_config(model)  # nothing from a hub's generation_config.json
    apply_length_settings(config, task["generation"])
    search = task["dev_search"]
    config.num_beams = search.get("num_beams", 1)
    config.length_penalty = search.get("length_penalty", 1.0)
    if config.num_beams > 1:
        config.early_stopping = search.get("early_stopping", False)
    config.do_sample = False
    # the evaluation's stops (StopsInDevGeneration hands generate() the tokenizer that finds them)
    config.stop_strings = list(task["generation"].get("stop_sequences", ())) or None


def load_splits(job: TrainingJob, tokenizer: PreTrainedTokenizerBase, eval_max_examples: int, keep_oov_words: bool = False):
    """Tokenized training set (with the copy models' `oov_words` when asked for) and the first
    `eval_max_examples` dev examples."""
    lengths = (job.task["max_source_length"], job.task["max_target_length"])
    features = input_features(job.task["model"])
    records = read_jsonl(job.train_path)
    causal = is_causal(job.task["model"])
    cut = references_cut(records, tokenizer, job.task["max_target_length"], causal)
    log.log(
        logging.WARNING if cut else logging.INFO,
        "%d of %d training references (%.1f%%) are longer than max_target_length (%d tokens, EOS included) and are cut",
        cut,
        len(records),
        100 * cut / max(1, len(records)),
        job.task["max_target_length"],
    )
    train_set = tokenize_records(records, tokenizer, *lengths, features, keep_oov_words, causal)
    valid_set = tokenize_records(read_jsonl(job.valid_path)[:eval_max_examples], tokenizer, *lengths, features, causal=causal)
    return train_set, valid_set


def resume_from(job: TrainingJob, inputs: dict[str, Path | None]) -> str | None:
    """The checkpoint this job resumes from (one of an identical earlier run: same settings, same `inputs`'
    contents, same code), or None; a run that starts afresh starts its logger's folder afresh too."""
    checkpoint = claim_checkpoints(job.checkpoint_dir, run_identity(job_settings(job), inputs, job.code_version))
    if checkpoint is None and job.log_dir is not None and job.log_dir.exists() and is_main_process():
        shutil.rmtree(job.log_dir)
    return checkpoint


def early_stopping(settings: dict) -> list[EarlyStoppingCallback]:
    """Early stopping on the dev metric, unless `early_stopping_patience` is null (train to max_steps)."""
    if settings["early_stopping_patience"] is None:
        return []
    return [
        EarlyStoppingCallback(
            early_stopping_patience=settings["early_stopping_patience"], early_stopping_threshold=settings["early_stopping_threshold"]
        )
    ]


def learning_rate_callbacks(settings: dict, metric: str) -> tuple[plateau.PlateauHalving | None, list]:
    """The plateau schedule the settings ask for (None otherwise) and the callback that feeds it."""
    schedule = plateau.plateau_schedule(settings)
    return schedule, ([plateau.HalvingOnPlateau(schedule, metric)] if schedule else [])


def job_settings(job: TrainingJob) -> dict:
    """The settings part of a run's identity (its inputs' contents are the other part)."""
    return {"task": job.task, "objective": job.objective, "seed": job.seed}


def build_trainer(
    trainer_class: type[Seq2SeqTrainer],
    job: TrainingJob,
    settings: dict,
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    datasets: tuple,
    collator,
    callbacks: tuple = (),
    arguments: Seq2SeqTrainingArguments | None = None,
    **trainer_options,
) -> Seq2SeqTrainer:
    """The trainer of one job: `settings`' arguments, the task's dev metric, early stopping and the
    plateau schedule when asked for (the trainer class must mix in PlateauScheduled), then
    `callbacks` (they write their part of a checkpoint), then the completion marker (a checkpoint is
    complete once every part is in it), then the job's own callbacks (progress, experiment trackers)."""
    train_set, valid_set = datasets
    schedule, schedule_callbacks = learning_rate_callbacks(settings, job.task["metric"])
    trainer = trainer_class(
        model=model,
        args=arguments or training_arguments(settings, job),
        data_collator=collator,
        train_dataset=train_set,
        eval_dataset=valid_set,
        processing_class=tokenizer,
        compute_metrics=compute_metrics_fn(
            tokenizer, job.task["metric"], metrics.Scoring.of_task(job.task), job.task["generation"].get("stop_sequences", ())
        ),
        callbacks=[
            DivergenceGuard(settings),
            *early_stopping(settings),
            *schedule_callbacks,
            *callbacks,
            CheckpointCompletion(),
            *job.callbacks,
        ],
        max_tokens=settings["max_tokens"],
        **trainer_options,
    )
    trainer.plateau_schedule = schedule
    return trainer


def run_and_save(trainer: Seq2SeqTrainer, job: TrainingJob, settings: dict, resume_from: str | None) -> dict:
    """Train (resuming if possible), then write the kept model (the best or the last, settings["keep"]),
    tokenizer, config and provenance atomically."""
    if resume_from:
        log.info("resuming from %s", resume_from)
    result = trainer.train(resume_from_checkpoint=resume_from)
    state = trainer.state
    summary = {
        "objective": job.objective,
        "seed": job.seed,
        "metric": job.task["metric"],
        "best_metric": state.best_metric,
        "best_checkpoint": Path(state.best_model_checkpoint).name if state.best_model_checkpoint else None,
        "kept": settings["keep"],  # best: the model of best_checkpoint; last: the model after global_step updates
        "global_step": state.global_step,
        "train_runtime_s": result.metrics.get("train_runtime"),
        "resumed_from": Path(resume_from).name if resume_from else None,
        "num_parameters": count_parameters(trainer.model),
        "processes": trainer.args.world_size,
    }
    if not trainer.is_world_process_zero():
        return summary  # one writer: the other workers of a multi-process run only train
    with atomic_directory(job.output_dir) as staging:
        trainer.model.save_pretrained(staging, safe_serialization=True)
        trainer.processing_class.save_pretrained(staging)
        with atomic_open(staging / "resolved_config.yaml") as handle:
            yaml.safe_dump({"task": job.task, "objective": job.objective, "seed": job.seed, "training": settings}, handle, sort_keys=False)
        write_json(staging / "provenance.json", provenance(job.repo_dir, job.code_version, **summary))
        write_json(staging / "log_history.json", state.log_history)
    log.info("saved %s (best %s = %s at %s)", job.output_dir, summary["metric"], summary["best_metric"], summary["best_checkpoint"])
    discard_checkpoints(job.checkpoint_dir)
    return summary
