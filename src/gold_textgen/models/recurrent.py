"""The paper's standard models: NQG++ (Zhou et al. 2017) and the pointer-generator (See et al. 2017), with
the layout and sizes of clovaai/FocusSeq2Seq, whose implementation the paper's Appendix B names.

Both are transformers `PreTrainedModel`s (saved and loaded like the transformer models, registered with
the Auto classes), whose `logits` are log-probabilities over the source-extended vocabulary (the
generator's vocabulary plus the tokenizer's copy placeholders; see copy_attention.py), so that every
consumer that takes `log_softmax(logits)` (the Trainer's loss and label smoother, GOLD's weights and
rewards, the token NLL tables) reads the copy distribution unchanged: log_softmax of a log-distribution
is itself.

* `nqg_pp`: bidirectional GRU encoder over word embeddings and token-feature embeddings (answer position
  BIO, and case/POS/NER where the data has them); a GRU decoder cell fed the previous word and the
  previous context; additive attention; a copy switch p_copy = sigmoid(W [s; c]) (Gulcehre et al. 2016's
  pointer softmax, as FocusSeq2Seq's NQG++); a tanh readout tied to the word embeddings.
* `pointer_generator`: bidirectional LSTM encoder; an LSTM decoder cell fed a projection of [word;
  context]; attention on [h; c] with coverage; p_gen = sigmoid(W [context; h; c; input]); the readout tied
  to the embeddings. The coverage loss sum_i min(a_i, coverage_i) is added with `coverage_loss_weight`.

Sizes: FocusSeq2Seq's defaults as its README runs them (embeddings 300, encoder 512 = 2 x 256, decoder 512,
attention 700, features 16, tied output) give exactly the paper's counts, 10,372,565 (NQG++, 20,000
words, four features) and 19,965,705 (pointer-generator, 50,000 words). Those counts are those of a
one-layer encoder and decoder: the paper says two layers, but FocusSeq2Seq's `num_layers` reaches neither
its encoder nor its decoder cell. `encoder_layers` stacks encoder layers here when asked for.

Where this differs from FocusSeq2Seq, on purpose: NQG++'s copy mass goes to the word at each source
position over the same extended vocabulary as the pointer-generator's (FocusSeq2Seq gives every source
position its own output slot and copies only out-of-vocabulary targets), and the LSTM bridge maps the
encoder's final cell state to the decoder's (FocusSeq2Seq feeds it the hidden state twice).
"""

from __future__ import annotations

import math
from typing import ClassVar

import torch
from torch import nn
from transformers import AutoConfig, AutoModelForSeq2SeqLM, GenerationMixin, PreTrainedModel

from .bidirectional_gru import encoder_states
from .copy_attention import AdditiveAttention, CopyDistribution, first_occurrences
from .copy_output import CopySeq2SeqOutput
from .decoder_inputs import ShiftedLabels
from .encoded_source import EncodedSource
from .packed_positions import PackedPositions, uniform_log_probability
from .recurrent_config import RecurrentSeq2SeqConfig
from .recurrent_search import search
from .recurrent_teacher_forcing import PackedTeacherForcing


class RecurrentSeq2SeqModel(ShiftedLabels, PackedTeacherForcing, PreTrainedModel, GenerationMixin):
    config_class = RecurrentSeq2SeqConfig
    base_model_prefix = "recurrent"
    main_input_name = "input_ids"
    _tied_weights_keys: ClassVar[dict[str, str]] = {"output_projection.weight": "embeddings.weight"}
    # Called with labels, the output carries their log-probabilities (`label_log_likelihoods`), worked out
    # without the [B, T, V] table or its gradient: what a fine-tuning loss reads of the reference tokens.
    returns_label_log_likelihoods = True

    def __init__(self, config: RecurrentSeq2SeqConfig):
        super().__init__(config)
        embedding, hidden, decoder = config.embedding_dim, config.encoder_hidden, config.decoder_hidden
        if hidden % 2:
            raise ValueError(f"encoder_hidden {hidden} must be even (two directions of {hidden} / 2)")
        self.embeddings = nn.Embedding(config.vocab_size, embedding, padding_idx=config.pad_token_id)
        self.feature_embeddings = nn.ModuleDict(
            {name: nn.Embedding(size, config.feature_dim, padding_idx=0) for name, size in sorted(config.feature_sizes.items())}
        )
        rnn = nn.LSTM if config.uses_lstm else nn.GRU
        encoder_input = embedding + config.feature_dim * len(config.feature_sizes)
        self.encoder = rnn(encoder_input, hidden // 2, num_layers=config.encoder_layers, bidirectional=True, batch_first=True)
        self.dropout = nn.Dropout(config.dropout)
        self.bridge = nn.Linear(hidden, decoder)
        state_size = 2 * decoder if config.uses_lstm else decoder
        if config.uses_lstm:
            self.bridge_cell = nn.Linear(hidden, decoder)
            self.decoder_input = nn.Linear(embedding + hidden, embedding)
            self.decoder_cell = nn.LSTMCell(embedding, decoder)
            switch_inputs, readout_inputs = hidden + state_size + embedding, hidden + decoder
        else:
            self.decoder_cell = nn.GRUCell(embedding + hidden, decoder)
            switch_inputs, readout_inputs = hidden + decoder, embedding + hidden + decoder
        self.attention = AdditiveAttention(hidden, state_size, config.attention_dim, coverage=config.coverage)
        self.copy_switch = nn.Linear(switch_inputs, 1) if config.copy else None
        self.readout = nn.Linear(readout_inputs, embedding)
        self.output_projection = nn.Linear(embedding, config.vocab_size, bias=False)
        self.post_init()

    def get_input_embeddings(self) -> nn.Embedding:
        return self.embeddings

    def get_output_embeddings(self) -> nn.Linear:
        return self.output_projection

    def _init_weights(self, module: nn.Module) -> None:
        """FocusSeq2Seq's initialisation (train.py lines 69-86, without GloVe), per model:

        NQG++: every parameter, a vector ~ N(0, 6 / (1 + n)) and a matrix Xavier-normal with gain sqrt(3); the
        attention bias, a [1, 1, A] tensor there, is Xavier-normal over that shape: N(0, 3 / A).
        Pointer-generator (utils/initializer.py): word embeddings and both bridges (weights and biases)
        ~ N(0, 1e-4^2); the encoder LSTM and the decoder LSTM cell ~ U(-0.02, 0.02) with biases 0 but the forget
        gate's 1 (in both bias vectors); the rest PyTorch's defaults, the attention bias ~ N(0, 1) (torch.randn)."""
        if self.config.uses_lstm:
            self._init_pointer_generator(module)
        elif isinstance(module, AdditiveAttention):
            nn.init.normal_(module.bias, std=math.sqrt(3 / module.bias.numel()))
            self._init_nqg(module, skip=("bias",))
        else:
            self._init_nqg(module)

    @staticmethod
    def _init_nqg(module: nn.Module, skip: tuple[str, ...] = ()) -> None:
        for name, parameter in module.named_parameters(recurse=False):
            if name in skip:
                continue
            if parameter.dim() == 1:
                nn.init.normal_(parameter, std=math.sqrt(6 / (1 + parameter.shape[0])))
            else:
                nn.init.xavier_normal_(parameter, gain=math.sqrt(3))

    def _init_pointer_generator(self, module: nn.Module) -> None:
        if module is self.embeddings or module is self.bridge or module is getattr(self, "bridge_cell", None):
            for parameter in module.parameters(recurse=False):
                nn.init.normal_(parameter, std=1e-4)
        elif isinstance(module, (nn.LSTM, nn.LSTMCell)):
            for name, parameter in module.named_parameters(recurse=False):
                if name.startswith("weight_"):
                    nn.init.uniform_(parameter, -0.02, 0.02)
                elif name.startswith("bias_"):
                    size = parameter.shape[0]
                    with torch.no_grad():
                        parameter.zero_()
                        parameter[size // 4 : size // 2] = 1.0  # PyTorch's gate order: input, forget, cell, output
        elif isinstance(module, AdditiveAttention):
            nn.init.normal_(module.bias, std=1.0)

    # -- encoder -------------------------------------------------------------------------------------
    def embed_words(self, ids: torch.Tensor) -> torch.Tensor:
        """Word embeddings; copy placeholders (ids past the generator's vocabulary) read as <unk>."""
        return self.embeddings(ids.masked_fill(ids >= self.config.vocab_size, self.config.unk_token_id))

    def encode(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None, features: dict[str, torch.Tensor], keys: bool = True):
        """(EncodedSource, initial decoder state); `keys=False` leaves the attention keys to the reader."""
        valid = input_ids.ne(self.config.pad_token_id) if attention_mask is None else attention_mask.bool()
        parts = [self.embed_words(input_ids)]
        for name, embedding in self.feature_embeddings.items():
            if name not in features:
                raise ValueError(f"the {self.config.architecture} model reads the token feature '{name}', but the batch has no '{name}'")
            parts.append(embedding(features[name][:, : input_ids.shape[1]]))
        inputs = self.dropout(torch.cat(parts, dim=-1))
        lengths = valid.sum(-1).clamp_min(1).cpu()
        outputs, final = encoder_states(self.encoder, inputs, lengths)
        keys = self.attention.project_keys(outputs) if keys else None
        encoded = EncodedSource(outputs, keys, valid, input_ids, first_occurrences(input_ids))
        return encoded, self.initial_state(final, outputs)

    def initial_state(self, final, outputs: torch.Tensor) -> dict[str, torch.Tensor]:
        def last_layer(states: torch.Tensor) -> torch.Tensor:  # [layers * 2, N, H / 2] -> [N, H]
            return torch.cat([states[-2], states[-1]], dim=-1)

        batch = outputs.shape[0]
        state = {"context": outputs.new_zeros(batch, self.config.encoder_hidden)}
        if self.config.uses_lstm:
            hidden, cell = final
            state["h"] = torch.relu(self.bridge(last_layer(hidden)))
            state["c"] = torch.relu(self.bridge_cell(last_layer(cell)))
            state["coverage"] = outputs.new_zeros(batch, outputs.shape[1])
        else:
            state["h"] = torch.tanh(self.bridge(last_layer(final)))
        return state

    # -- one decoder step ----------------------------------------------------------------------------
    def step(self, previous: torch.Tensor, state: dict[str, torch.Tensor], encoded: EncodedSource):
        """(log p(. | history) [N, output_size], next state, coverage loss [N] or None) after `previous` [N]."""
        word = self.embed_words(previous)
        reads, next_state, coverage_loss = self.recur(word, state, encoded)
        distribution = self.output_distribution(reads, encoded.source_ids, encoded.first_position)
        return distribution.log_probs(), next_state, coverage_loss

    def recur(self, word: torch.Tensor, state: dict[str, torch.Tensor], encoded: EncodedSource):
        """The recurrent part of a step (decoder cell, attention, context, coverage): what the output layer
        reads [N, ...], the next state, and the coverage loss [N] (None without coverage)."""
        context = state["context"]
        if self.config.uses_lstm:
            cell_input = self.decoder_input(torch.cat([word, context], dim=-1))
            hidden, cell = self.decoder_cell(cell_input, (state["h"], state["c"]))
            query = torch.cat([hidden, cell], dim=-1)
            coverage = state["coverage"]
            attention = self.attention(encoded.keys, query, encoded.valid, coverage if self.config.coverage else None)
            context = torch.bmm(attention.unsqueeze(1), encoded.outputs).squeeze(1)
            coverage_loss = torch.minimum(attention, coverage).sum(-1) if self.config.coverage else None
            next_state = {"context": context, "h": hidden, "c": cell, "coverage": coverage + attention}
            reads = {"attention": attention, "readout": torch.cat([context, hidden], dim=-1)}
            reads["switch"] = torch.cat([context, query, cell_input], dim=-1)
            return reads, next_state, coverage_loss
        hidden = self.decoder_cell(torch.cat([word, context], dim=-1), state["h"])
        attention = self.attention(encoded.keys, hidden, encoded.valid, None)
        context = torch.bmm(attention.unsqueeze(1), encoded.outputs).squeeze(1)
        reads = {
            "attention": attention,
            "readout": torch.cat([word, context, hidden], dim=-1),
            "switch": torch.cat([hidden, context], dim=-1),
        }
        return reads, {"context": context, "h": hidden}, None

    def output_distribution(
        self,
        reads: dict[str, torch.Tensor],
        source_ids: torch.Tensor,
        first_position: torch.Tensor,
        positions: PackedPositions | None = None,
    ) -> CopyDistribution:
        """The distribution over the extended vocabulary from what `recur` read (any number of steps,
        flattened into N; `source_ids` and `first_position` [N, S] as in EncodedSource, the source of each;
        `positions`: the packed positions these rows are, teacher forcing's)."""
        if self.config.uses_lstm:
            readout = torch.tanh(self.readout_dropout(self.readout(reads["readout"]), positions))
        else:
            readout = self.readout_dropout(torch.tanh(self.readout(reads["readout"])), positions)
        generate_logit = None
        if self.copy_switch is not None:
            generate_logit = self.copy_switch(reads["switch"])
            if not self.config.uses_lstm:  # NQG++'s switch is the copy probability: g = 1 - sigmoid(s) = sigmoid(-s)
                generate_logit = -generate_logit
        plain = type(self.output_projection) is nn.Linear  # a wrapped layer (PEFT's) computes more than r W^T
        logits, weight = self.output_projection(readout), self.output_projection.weight if plain else None
        size = self.config.output_size
        return CopyDistribution(logits, reads["attention"], source_ids, first_position, generate_logit, size, readout, weight)

    # -- teacher forcing -----------------------------------------------------------------------------
    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        decoder_input_ids: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        answer_tags: torch.Tensor | None = None,
        case_tags: torch.Tensor | None = None,
        pos_tags: torch.Tensor | None = None,
        ner_tags: torch.Tensor | None = None,
        return_logits: bool = True,
        return_token_statistics: bool = False,
        **unused,
    ) -> CopySeq2SeqOutput:
        """Teacher-forced log-probabilities [B, T, output_size] of every next token; with `labels`, the
        token-mean NLL (+ the weighted coverage loss) as `loss`. Only the positions a loss reads are
        computed (packed_positions.py; the others get a uniform row, and no coverage loss). Only the
        decoder cell and the attention run step by step; the output layer (readout, copy switch, the
        vocabulary projection and the copy mixture) runs once over all the computed positions, which is most
        of a step's arithmetic: one large matrix product instead of one per position, the same numbers as
        `step` gives position by position.

        Called with labels, `return_logits=False` leaves out the [B, T, V] table (`logits` None), the
        largest tensor of a step, for a caller that reads only the labels' log-likelihoods;
        `return_token_statistics` adds each position's entropy and most likely id, read from the packed rows
        without the table."""
        features = {
            name: value
            for name, value in (("answer", answer_tags), ("case", case_tags), ("pos", pos_tags), ("ner", ner_tags))
            if value is not None
        }
        if decoder_input_ids is None:
            if labels is None:
                raise ValueError("forward needs decoder_input_ids or labels")
            decoder_input_ids = self.shift_right(labels)
        encoded, state = self.encode(input_ids, attention_mask, features, keys=not self.runs_attentive_gru(decoder_input_ids))
        positions = PackedPositions.of(labels, decoder_input_ids, self.config.pad_token_id)
        reads, coverage = self.teacher_forced_reads(encoded, state, decoder_input_ids, positions)
        source = (tensor.index_select(0, positions.rows) for tensor in (encoded.source_ids, encoded.first_position))
        distribution = self.output_distribution(reads, *source, positions)
        logits = None
        if return_logits or labels is None:
            logits = positions.unpack(distribution.log_probs(), uniform_log_probability(self.config.output_size))
        coverage_losses = positions.unpack(coverage) if coverage is not None else None
        loss = label_log_likelihoods = entropies = top = None
        if labels is not None:  # from the targets' log-likelihoods alone: no gradient through the [B, T, V] table
            token_log_likelihoods = positions.unpack(distribution.log_likelihood(positions.take(labels)))
            loss = self.teacher_forced_loss(token_log_likelihoods, labels, coverage_losses)
            label_log_likelihoods = token_log_likelihoods.masked_fill(labels.eq(-100), 0.0)
        if return_token_statistics:
            entropies, top = distribution.entropies_and_top()
            entropies, top = positions.unpack(entropies), positions.unpack(top, -1)
        return CopySeq2SeqOutput(
            loss=loss, logits=logits, coverage_losses=coverage_losses, label_log_likelihoods=label_log_likelihoods,
            token_entropies=entropies, top_tokens=top,
        )  # fmt: skip

    # -- search --------------------------------------------------------------------------------------
    @torch.no_grad()
    def generate(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None, generation_config=None, **kwargs
    ) -> torch.Tensor:
        """Greedy, beam or sampled outputs [B * num_return_sequences, L] that start with the decoder start
        token, as transformers' generate() returns them (recurrent_search.py)."""
        features = {name.removesuffix("_tags"): kwargs.pop(name) for name in list(kwargs) if name.endswith("_tags")}
        config = generation_config if generation_config is not None else self.generation_config
        return search(self, input_ids, attention_mask, features, config)


AutoConfig.register(RecurrentSeq2SeqConfig.model_type, RecurrentSeq2SeqConfig)
AutoModelForSeq2SeqLM.register(RecurrentSeq2SeqConfig, RecurrentSeq2SeqModel)
