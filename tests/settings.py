"""Complete settings objects for tests, from the schema's defaults (its only owner) plus what a test sets."""

from gold_textgen.data.demo_task import DemoTaskSpec
from gold_textgen.training.objective_settings import ObjectiveSettings
from gold_textgen.workflow.schema import defaults

# The smallest transformer the tests train: seconds on a CPU.
TINY_MODEL = {"kind": "scratch", "architecture": "transformer", "d_model": 16, "encoder_layers": 1, "decoder_layers": 1}
TINY_MODEL |= {"attention_heads": 2, "ffn_dim": 32, "dropout": 0.0, "max_position_embeddings": 32}


def demo_spec(**values) -> DemoTaskSpec:
    """The demo language with the schema's defaults except `values`."""
    return DemoTaskSpec.from_config(defaults("synthetic_source", kind="synthetic", **values))


def objective_settings(**values) -> ObjectiveSettings:
    """A GOLD objective (`reward`, `min_weight`, ...) and the task's GOLD block (`sync_every`, ...), each with
    the schema's defaults except `values`."""
    return ObjectiveSettings.with_defaults(**values)


def tiny_recurrent(architecture: str, **values) -> dict:
    """The model settings of a tiny NQG++ or pointer-generator (seconds to train on a CPU)."""
    sizes = {"embedding_dim": 16, "encoder_hidden": 16, "decoder_hidden": 16, "attention_dim": 12, "dropout": 0.0}
    return defaults("model", kind="scratch", architecture=architecture, **(sizes | values))
