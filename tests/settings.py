"""Complete settings objects for tests, from the schema's defaults (its only owner) plus what a test sets."""

import torch

from gold_textgen.config.schema import defaults
from gold_textgen.data.demo_task import DemoTaskSpec
from gold_textgen.training.objective_settings import ObjectiveSettings

# The smallest transformer the tests train: seconds on a CPU.
TINY_MODEL = {"kind": "scratch", "architecture": "transformer", "d_model": 16, "encoder_layers": 1, "decoder_layers": 1}
TINY_MODEL |= {"attention_heads": 2, "ffn_dim": 32, "dropout": 0.0, "max_position_embeddings": 32}


def demo_spec(**values) -> DemoTaskSpec:
    """The demo language with the schema's defaults except `values`."""
    return DemoTaskSpec.from_config(defaults("synthetic_source", kind="synthetic", **values))


def every_trainable_loss() -> dict[str, dict]:
    """Every row of the loss catalog but the one that samples its own outputs, with the settings a row
    requires (the schema has no default for them)."""
    from gold_textgen.catalog import LOSSES

    required = {"gold": dict(reward="s", floor=0.05, min_weight=0.1), "tailr": dict(density_ratio_threshold=0.5)}
    required |= {"mixce": dict(mixing_ratio=0.5), "probability": dict(alpha=0.5, threshold=0.001)}
    return {name: required.get(name, {}) for name in LOSSES if "sampling" not in LOSSES[name].needs(required.get(name, {}))}


def objective_settings(**values) -> ObjectiveSettings:
    """A GOLD objective (`reward`, `min_weight`, ...) and the task's GOLD block (`sync_every`, ...), each with
    the schema's defaults except `values`."""
    return ObjectiveSettings.with_defaults(**values)


def tiny_recurrent(architecture: str, **values) -> dict:
    """The model settings of a tiny NQG++ or pointer-generator (seconds to train on a CPU)."""
    sizes = {"embedding_dim": 16, "encoder_hidden": 16, "decoder_hidden": 16, "attention_dim": 12, "dropout": 0.0}
    return defaults("model", kind="scratch", architecture=architecture, **(sizes | values))


def tiny_transformer_batch(dropout: float = 0.0, models: int = 1):
    """(tokenizer, [models] tiny transformers, a batch of 6 demo pairs): what the trainer tests compute
    one loss on."""
    from transformers import DataCollatorForSeq2Seq

    from gold_textgen.data.demo_task import generate_split
    from gold_textgen.data.seq2seq_batches import tokenize_records
    from gold_textgen.data.tokenization import train_tokenizer, training_texts
    from gold_textgen.models.transformer import build_scratch_model

    torch.manual_seed(0)
    records = generate_split(demo_spec(num_train=24, max_length=8), "train")
    tokenizer = train_tokenizer(training_texts(records))
    built = [build_scratch_model({**TINY_MODEL, "dropout": dropout}, tokenizer) for _ in range(models)]
    batch = DataCollatorForSeq2Seq(tokenizer, model=built[0])([tokenize_records(records, tokenizer, 12, 12)[i] for i in range(6)])
    return tokenizer, built, batch
