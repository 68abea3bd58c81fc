"""Maximum-likelihood training, from scratch or from a pretrained checkpoint: the starting point of every
fine-tuning objective."""

from __future__ import annotations

import logging

from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer

from ..checkpoints.checkpoint_loading import KnownMissingKeys
from ..data.seq2seq_batches import PaddedFieldsCollator
from ..data.token_features import feature_sizes, input_features
from ..data.tokenization import load_tokenizer
from ..models.input_contract import WITHOUT_TABLE, reads_labels_cheaply
from ..models.transformer import count_parameters, initial_model
from ..runtime.model_process import seed_everything
from .dev_generation import StopsInDevGeneration
from .plateau_schedule import PlateauScheduled
from .samplers import EpochSeededSampling
from .token_statistics import TokenStatistics
from .training_job import TrainingJob, build_trainer, configure_generation, load_splits, resume_from, run_and_save

log = logging.getLogger(__name__)


class MleTrainer(StopsInDevGeneration, TokenStatistics, PlateauScheduled, KnownMissingKeys, EpochSeededSampling, Seq2SeqTrainer):
    """The transformers Seq2SeqTrainer, with batch order that survives a resume (see samplers.py), no
    warning for the weights a checkpoint never holds (checkpoint_loading.py), FocusSeq2Seq's
    halve-on-plateau schedule when asked for (plateau_schedule.py), and TRL's token statistics in its
    log lines (token_statistics.py)."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.get("labels")  # the Trainer pops them when it smooths labels
        training = model.training and labels is not None
        if training and self.label_smoother is None and reads_labels_cheaply(self.accelerator.unwrap_model(model)):
            inputs = {**inputs, **WITHOUT_TABLE}  # the loss reads the labels' log-likelihoods alone
        loss, outputs = super().compute_loss(model, inputs, return_outputs=True, num_items_in_batch=num_items_in_batch)
        if training:
            self.record_outputs(outputs, labels)
        return (loss, outputs) if return_outputs else loss


def train_mle(job: TrainingJob) -> dict:
    """Maximum-likelihood training from scratch or from a pretrained checkpoint."""
    settings = job.task["mle"]
    seed_everything(job.seed)
    tokenizer = (
        load_tokenizer(job.tokenizer_path)
        if job.tokenizer_path
        else load_tokenizer(job.task["model"]["name_or_path"], job.task["model"].get("revision"))
    )
    model = initial_model(job.task["model"], tokenizer, feature_sizes(input_features(job.task["model"])))
    configure_generation(model, job.task)
    log.info("model: %s parameters", f"{count_parameters(model):,}")
    datasets = load_splits(job, tokenizer, settings["eval_max_examples"])
    checkpoint = resume_from(job, {"train": job.train_path, "valid": job.valid_path, "tokenizer": job.tokenizer_path})
    collator = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer, model=model))
    trainer = build_trainer(MleTrainer, job, settings, model, tokenizer, datasets, collator)
    return run_and_save(trainer, job, settings, checkpoint)
