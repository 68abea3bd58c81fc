"""Decoder settings reach generate(), and output lengths are counted as fairseq counts them."""

from __future__ import annotations

import pytest
import torch
from settings import TINY_MODEL

from gold_textgen.data.tokenization import train_tokenizer
from gold_textgen.evaluation.decoding import generate_texts, generation_config
from gold_textgen.models.prompt_completion import build_causal_model
from gold_textgen.models.transformer import build_scratch_model

WORDS = [f"w{i}" for i in range(30)]
GENERATION = {"max_new_tokens": 5, "min_new_tokens": 5, "length_penalty": 1.0, "no_repeat_ngram_size": 0}


@pytest.fixture(scope="module")
def tokenizer():
    return train_tokenizer([" ".join(WORDS)])


def output_ids(model, tokenizer, config) -> list[list[int]]:
    inputs = tokenizer(["w1 w2 w3", "w4 w5"], return_tensors="pt", padding=True)
    with torch.inference_mode():
        sequences = model.generate(**inputs, generation_config=config)
    return [[int(t) for t in row if t not in (tokenizer.pad_token_id, tokenizer.eos_token_id)] for row in sequences[:, 1:]]


@pytest.mark.parametrize("forced_start", [False, True])
def test_max_and_min_new_tokens_count_like_fairseq(tokenizer, forced_start):
    torch.manual_seed(0)
    model = build_scratch_model(TINY_MODEL, tokenizer)
    if forced_start:  # BART's pretrained generation config forces <s> first; fairseq's BART counts it too
        model.generation_config.forced_bos_token_id = tokenizer.bos_token_id
    config = generation_config(model, GENERATION, {"num_beams": 1})
    for ids in output_ids(model, tokenizer, config):
        assert len(ids) == 5  # min = max = 5 output tokens before EOS
        assert (ids[0] == tokenizer.bos_token_id) == forced_start


def test_decoder_settings_reach_the_generation_config(tokenizer):
    model = build_scratch_model(TINY_MODEL, tokenizer)
    config = generation_config(model, GENERATION | {"length_penalty": 2.0, "no_repeat_ngram_size": 3}, {"do_sample": True, "top_k": 7})
    assert (config.do_sample, config.top_k, config.num_beams, config.length_penalty, config.no_repeat_ngram_size) == (True, 7, 1, 2.0, 3)
    nucleus = generation_config(model, GENERATION, {"do_sample": True, "top_p": 0.9, "top_k": 0})
    assert (nucleus.top_p, nucleus.top_k) == (0.9, 0)
    assert generation_config(model, GENERATION, {"num_beams": 4}).num_beams == 4


def as_records(sources: list[str]) -> list[dict]:
    return [{"id": index, "source": source, "target": ""} for index, source in enumerate(sources)]


def test_sampling_is_seeded_and_top_k_one_is_greedy(tokenizer):
    torch.manual_seed(0)
    model = build_scratch_model(TINY_MODEL, tokenizer)
    sources = as_records(["w1 w2 w3", "w4 w5", "w6"])
    lengths = GENERATION | {"min_new_tokens": 1}
    greedy = generate_texts(model, tokenizer, sources, generation_config(model, lengths, {"num_beams": 1}), 2, 16)
    top1 = generate_texts(model, tokenizer, sources, generation_config(model, lengths, {"do_sample": True, "top_k": 1}), 2, 16, 5)
    assert top1 == greedy
    wide = generation_config(model, lengths, {"do_sample": True, "top_k": 30})
    assert generate_texts(model, tokenizer, sources, wide, 2, 16, 3) == generate_texts(model, tokenizer, sources, wide, 2, 16, 3)


@pytest.mark.parametrize(
    ("decoder", "expected"),
    [
        ({"num_beams": 1}, {"num_beams": 1, "do_sample": False}),
        ({"num_beams": 4}, {"num_beams": 4, "do_sample": False}),
        ({"do_sample": True, "top_k": 20}, {"num_beams": 1, "do_sample": True, "top_k": 20}),
        ({"do_sample": True, "top_k": 0, "top_p": 0.9}, {"do_sample": True, "top_k": 0, "top_p": 0.9}),
        ({"do_sample": True, "top_k": 5, "temperature": 0.7}, {"do_sample": True, "top_k": 5, "temperature": 0.7}),
    ],
)
def test_every_decoder_setting_reaches_the_generation_config(tokenizer, decoder, expected):
    model = build_scratch_model(TINY_MODEL, tokenizer)
    generation = {**GENERATION, "length_penalty": 2.0, "no_repeat_ngram_size": 3}
    before = model.generation_config.to_dict()
    config = generation_config(model, generation, decoder)
    assert {key: getattr(config, key) for key in expected} == expected
    assert (config.length_penalty, config.no_repeat_ngram_size, config.num_return_sequences) == (2.0, 3, 1)
    assert model.generation_config.to_dict() == before  # the model's own config is left alone


def test_top_k_changes_what_sampling_produces(tokenizer):
    """A decoder that dropped top_k would sample from the whole vocabulary: with top_k 1 sampling must
    equal greedy search whatever the seed."""
    torch.manual_seed(0)
    model = build_scratch_model(TINY_MODEL, tokenizer)
    greedy = generate_texts(model, tokenizer, as_records(WORDS[:6]), generation_config(model, GENERATION, {"num_beams": 1}), 8, 16)
    top1 = generation_config(model, GENERATION, {"do_sample": True, "top_k": 1})
    wide = generation_config(model, GENERATION, {"do_sample": True, "top_k": 0})
    assert generate_texts(model, tokenizer, as_records(WORDS[:6]), top1, 8, 16, sample_seed=3) == greedy
    assert any(generate_texts(model, tokenizer, as_records(WORDS[:6]), wide, 8, 16, sample_seed=seed) != greedy for seed in range(3))


def hub_like(model, **settings):
    """`model` with a generation_config.json as a hub model ships it (Qwen3's sampling recipe, BART's early stop)."""
    for key, value in settings.items():
        setattr(model.generation_config, key, value)
    return model


# Every other search setting a hub's generation_config.json can carry, at a value that would change the output.
HUB_SETTINGS = dict(
    min_p=0.3, typical_p=0.5, epsilon_cutoff=0.05, eta_cutoff=0.05, repetition_penalty=1.5, encoder_repetition_penalty=1.5,
    no_repeat_ngram_size=1, renormalize_logits=True, suppress_tokens=[5, 6, 7],
)  # fmt: skip


@pytest.mark.parametrize("family", ["seq2seq", "causal"])
def test_no_search_setting_of_a_hub_generation_config_reaches_a_decoder(tokenizer, family):
    """min_p, typical_p, the cutoffs, the penalties, suppressed tokens, ...: whatever a model's own
    generation config (and, for a causal LM, the wrapped language model's) sets, a decoder searches with
    the experiment's settings alone."""
    torch.manual_seed(0)
    if family == "seq2seq":
        plain = build_scratch_model(TINY_MODEL, tokenizer)
        hub = build_scratch_model(TINY_MODEL, tokenizer)
    else:
        sizes = {"d_model": 16, "ffn_dim": 32, "decoder_layers": 2, "attention_heads": 2, "max_position_embeddings": 64, "dropout": 0.0}
        plain, hub = build_causal_model(sizes, tokenizer), build_causal_model(sizes, tokenizer)
        hub_like(hub.language_model, do_sample=True, temperature=0.6, top_k=20, **HUB_SETTINGS)
    hub.load_state_dict(plain.state_dict())
    hub_like(hub, **HUB_SETTINGS)
    records = as_records(["w1 w2 w3", "w4 w5 w6 w7", "w8"])
    for decoder in ({"do_sample": True}, {"do_sample": True, "top_k": 5}, {"num_beams": 1}, {"num_beams": 3}):
        outputs = [
            generate_texts(model, tokenizer, records, generation_config(model, GENERATION, decoder), 2, 8, sample_seed=1)
            for model in (plain, hub)
        ]
        assert outputs[0] == outputs[1], decoder
    assert hub.generation_config.min_p == 0.3  # the model's own config is back after decoding


def test_a_hub_generation_config_never_changes_a_decoder(tokenizer):
    """Decoding settings come from the experiment's config alone: a hub model's temperature 0.6, top-p 0.95,
    top-k 20 and early stop leave temperature-1 sampling, greedy and beam search as the config asks."""
    torch.manual_seed(0)
    plain = build_scratch_model(TINY_MODEL, tokenizer)
    hub = hub_like(build_scratch_model(TINY_MODEL, tokenizer), do_sample=True, temperature=0.6, top_p=0.95, top_k=20)
    hub.load_state_dict(plain.state_dict())
    hub.generation_config.repetition_penalty = 1.3
    sampling = generation_config(hub, GENERATION, {"do_sample": True})
    assert (sampling.top_k, sampling.top_p, sampling.temperature, sampling.repetition_penalty) == (0, 1.0, 1.0, 1.0)
    greedy = generation_config(hub, GENERATION, {"num_beams": 1})
    assert greedy.do_sample is False and greedy.repetition_penalty == 1.0
    beam = generation_config(hub_like(hub, early_stopping=True), GENERATION, {"num_beams": 3})
    assert beam.early_stopping is False
    assert generation_config(hub, GENERATION, {"num_beams": 3, "early_stopping": True}).early_stopping is True
    records = as_records(["w1 w2 w3", "w4 w5 w6 w7", "w8"])
    for decoder in ({"do_sample": True}, {"num_beams": 1}, {"num_beams": 3}):
        outputs = [
            generate_texts(model, tokenizer, records, generation_config(model, GENERATION, decoder), 2, 8, sample_seed=1)
            for model in (plain, hub)
        ]
        assert outputs[0] == outputs[1], decoder
