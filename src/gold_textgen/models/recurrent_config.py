"""The configuration of the standard models (NQG++ and the pointer-generator, recurrent.py): their sizes,
features and copy settings, saved with every model as transformers configs are."""

from __future__ import annotations

from transformers import PretrainedConfig

from ..config.views import RECURRENT_ARCHITECTURES


class RecurrentSeq2SeqConfig(PretrainedConfig):
    model_type = "gold_recurrent_seq2seq"

    def __init__(
        self,
        architecture: str = "nqg_pp",
        vocab_size: int = 20000,
        copy_slots: int = 0,
        embedding_dim: int = 300,
        encoder_hidden: int = 512,
        decoder_hidden: int = 512,
        attention_dim: int = 700,
        encoder_layers: int = 1,
        feature_sizes: dict | None = None,
        feature_dim: int = 16,
        dropout: float = 0.0,
        copy: bool = True,
        coverage: bool = False,
        coverage_loss_weight: float = 0.0,
        unk_token_id: int = 3,
        **kwargs,
    ):
        if architecture not in RECURRENT_ARCHITECTURES:
            raise ValueError(f"unknown recurrent architecture '{architecture}' (expected {' or '.join(RECURRENT_ARCHITECTURES)})")
        self.architecture = architecture
        self.vocab_size = vocab_size
        self.copy_slots = copy_slots
        self.embedding_dim = embedding_dim
        self.encoder_hidden = encoder_hidden
        self.decoder_hidden = decoder_hidden
        self.attention_dim = attention_dim
        self.encoder_layers = encoder_layers
        self.feature_sizes = dict(feature_sizes or {})
        self.feature_dim = feature_dim
        self.dropout = dropout
        self.copy = copy
        self.coverage = coverage
        self.coverage_loss_weight = coverage_loss_weight
        self.unk_token_id = unk_token_id
        kwargs.setdefault("is_encoder_decoder", True)
        kwargs.setdefault("tie_word_embeddings", True)
        super().__init__(**kwargs)

    @property
    def output_size(self) -> int:
        """The extended vocabulary: the generator's words, then the copy placeholders."""
        return self.vocab_size + self.copy_slots

    @property
    def uses_lstm(self) -> bool:
        return self.architecture == "pointer_generator"
