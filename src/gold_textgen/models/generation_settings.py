"""A model's token conventions, and nothing else of its generation config, while it generates.

transformers' generate() fills every setting a generation config leaves unset (None) from the model's own
`generation_config` (a hub model's generation_config.json: Qwen3 samples with temperature 0.6, top-p 0.95,
top-k 20 and min-p 0; BART beams with a length penalty), and only then from its own neutral defaults. A
decoder of an experiment would then silently search with the hub's recipe for every setting it does not
name (min_p, typical_p, epsilon_cutoff, eta_cutoff, repetition penalties, suppressed tokens, ...). While
`token_conventions_only` holds, the model and every transformers model inside it (a causal LM wrapped in
the prompt -> completion contract) carry only their token conventions: what a decoder does not set is
transformers' neutral default.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from transformers import GenerationConfig, PreTrainedModel

# A model's token conventions, kept from its own generation config (BART forces <s> first and </s> last,
# as fairseq's BART does); everything else about a search comes from the experiment's config.
TOKEN_KEYS = ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id", "forced_bos_token_id", "forced_eos_token_id")


def token_conventions(model: PreTrainedModel, **settings) -> GenerationConfig:
    """A generation config with `model`'s token conventions and `settings`, nothing else."""
    own = model.generation_config
    tokens = {key: getattr(own, key) for key in TOKEN_KEYS if getattr(own, key, None) is not None}
    return GenerationConfig(**tokens, **settings)


@contextmanager
def token_conventions_only(model: torch.nn.Module) -> Iterator[None]:
    """During the block, `model` and every PreTrainedModel inside it have a generation_config that holds
    their token conventions alone; their own configs come back after it."""
    saved = [(module, getattr(module, "generation_config", None)) for module in model.modules() if isinstance(module, PreTrainedModel)]
    saved = [(module, config) for module, config in saved if config is not None]  # base models (no LM head) have none
    try:
        for module, _ in saved:
            module.generation_config = token_conventions(module)
        yield
    finally:
        for module, config in saved:
            module.generation_config = config
