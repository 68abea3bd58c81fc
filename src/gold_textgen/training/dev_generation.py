"""Dev selection decodes as the evaluation does, stop sequences included.

`configure_generation` (training_job.py) puts the task's stop sequences in the model's generation config;
generate() finds them only with the tokenizer, which `Seq2SeqTrainer.evaluate` does not pass. Without it
every run-on would generate to the length limit (the scores are the same: `compute_metrics_fn` cuts at the
first stop, but the time is not)."""

from __future__ import annotations


class StopsInDevGeneration:
    """A Seq2SeqTrainer mixin: dev evaluation's generate() gets the tokenizer when the model's generation
    config has stop strings."""

    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix: str = "eval", **gen_kwargs):
        if getattr(self.model.generation_config, "stop_strings", None):
            gen_kwargs.setdefault("tokenizer", self.processing_class)
        return super().evaluate(eval_dataset, ignore_keys, metric_key_prefix, **gen_kwargs)
