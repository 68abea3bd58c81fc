"""Decoder-only language models in the seq2seq contract (models/prompt_completion.py): the prompt is never
scored, GOLD's loss is the formula on the completion tokens, and batching (left-aligned prompts) changes
no logit and no decoded output. The reference computations call the causal LM itself on one concatenated
prompt + completion sequence at a time, without the wrapper."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import torch
from settings import demo_spec, objective_settings
from test_gold_trainer import make_trainer
from tokenizers.processors import TemplateProcessing
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, DataCollatorForSeq2Seq, GenerationConfig

from gold_textgen.data.demo_task import generate_split
from gold_textgen.data.seq2seq_batches import encode_records, references_cut
from gold_textgen.data.tokenization import load_tokenizer, train_tokenizer, training_texts
from gold_textgen.evaluation.decoding import generate_texts
from gold_textgen.evaluation.token_nll import token_nll_table
from gold_textgen.models.prompt_completion import PromptCompletionLM, build_causal_model
from gold_textgen.models.transformer import initial_model
from gold_textgen.training.helper_models import model_from_weights

TINY_CAUSAL = {"d_model": 16, "ffn_dim": 32, "decoder_layers": 2, "attention_heads": 2, "max_position_embeddings": 64, "dropout": 0.0}
LENGTH = 10


def tiny_causal_setup():
    """Demo records, a tokenizer trained on them, a tiny causal model built from seed 0 and the records encoded."""
    torch.manual_seed(0)
    records = generate_split(demo_spec(num_train=12, max_length=8), "train")
    tokenizer = train_tokenizer(training_texts(records))
    model = build_causal_model(TINY_CAUSAL, tokenizer).eval()
    encoded = encode_records(records, tokenizer, LENGTH, LENGTH)
    return records, tokenizer, model, encoded


@pytest.fixture(scope="module")
def setup():
    return tiny_causal_setup()


def completion_logprobs_by_hand(model: PromptCompletionLM, example: dict, grad: bool = False) -> torch.Tensor:
    """log p(completion token t | prompt, completion < t) from the causal LM on the one sequence."""
    prompt, completion = example["input_ids"], example["labels"]
    sequence = torch.tensor([prompt + completion])
    with torch.set_grad_enabled(grad):
        logits = model.language_model(input_ids=sequence).logits[0]
    logprobs = logits.log_softmax(-1)[len(prompt) - 1 : len(prompt) - 1 + len(completion)]
    return logprobs.gather(-1, torch.tensor(completion).unsqueeze(-1)).squeeze(-1)


def test_the_loss_scores_the_completion_alone(setup):
    records, tokenizer, model, encoded = setup
    batch = DataCollatorForSeq2Seq(tokenizer, model=model)(encoded)
    assert len({len(e["input_ids"]) for e in encoded}) > 1  # prompts of several lengths: the batch pads them
    with torch.no_grad():
        loss = model(**batch).loss
    by_hand = torch.cat([completion_logprobs_by_hand(model, example) for example in encoded])
    assert torch.allclose(loss, -by_hand.mean(), atol=1e-5)
    # The causal LM's own loss, prompt tokens labelled -100, is the same number: nothing scores the prompt.
    own = []
    for example in encoded:
        sequence = torch.tensor([example["input_ids"] + example["labels"]])
        labels = torch.tensor([[-100] * len(example["input_ids"]) + example["labels"]])
        with torch.no_grad():
            own.append(model.language_model(input_ids=sequence, labels=labels).loss * len(example["labels"]))
    assert torch.allclose(loss, torch.stack(own).sum() / len(by_hand), atol=1e-5)
    # The reward cache and token NLL hold one value per completion token, the same values.
    table = token_nll_table(model, tokenizer, records, LENGTH, LENGTH, batch_size=5)
    assert sorted(set(table["example"])) == list(range(len(encoded)))
    for index, example in enumerate(encoded):
        rows = table[table["example"] == index].sort_values("position")
        assert list(rows["token_id"]) == example["labels"]
        assert torch.allclose(torch.tensor(rows["nll"].to_numpy()), -completion_logprobs_by_hand(model, example), atol=1e-4)


def test_gold_s_loss_on_a_causal_model_is_the_formula_by_hand(setup, tmp_path):
    """pi_tilde and p_MLE are copies of the policy here, so every probability is the policy's own p_t:
    loss = -(1/N) sum_t max(u, p_t) * sum_{j=t..t+5} max(p_j, c) * log p_t."""
    _, tokenizer, model, encoded = setup
    u, c = 0.1, 0.05
    settings = objective_settings(reward="s", min_weight=u, floor=c, baseline=0.0, rewards="online", label_smoothing=0.0)
    trainer = make_trainer(tmp_path, model, tokenizer, settings, frozen_model=model_from_weights(model))
    collate = trainer.data_collator
    model.train()  # the training loss (in eval mode the trainer reports the plain NLL); no dropout here
    try:
        with torch.no_grad():
            loss = trainer.compute_loss(model, dict(collate([dict(e) for e in encoded])))
    finally:
        model.eval()
    terms, tokens = [], 0
    for example in encoded:
        logp = completion_logprobs_by_hand(model, example)
        p = logp.exp()
        returns = torch.stack([p[t : t + 6].clamp_min(c).sum() for t in range(len(p))])
        terms.append((p.clamp_min(u) * returns * logp).sum())
        tokens += len(p)
    assert torch.allclose(loss, -torch.stack(terms).sum() / tokens, atol=1e-5)


@pytest.mark.parametrize("decoder", [{"num_beams": 1}, {"num_beams": 3}], ids=["greedy", "beam3"])
def test_a_left_padded_batch_decodes_as_its_prompts_one_by_one(setup, decoder):
    records, tokenizer, model, _ = setup
    config = GenerationConfig(max_length=LENGTH + 2, min_length=4, **decoder)
    together = generate_texts(model, tokenizer, records[:6], config, batch_size=6, max_source_length=LENGTH, group_by_length=False)
    alone = [generate_texts(model, tokenizer, [r], config, batch_size=1, max_source_length=LENGTH)[0] for r in records[:6]]
    assert together == alone


def test_generate_counts_lengths_as_a_seq2seq_model_does(setup):
    """max_length / min_length count the start token (and EOS) as for an encoder-decoder: at most
    max_length - 1 new tokens after the start token, and no EOS among the first min_length - 1."""
    _, tokenizer, model, encoded = setup
    batch = DataCollatorForSeq2Seq(tokenizer)([{k: e[k] for k in ("input_ids", "attention_mask")} for e in encoded])
    for min_length in (1, 6):
        generated = model.generate(**batch, generation_config=GenerationConfig(max_length=8, min_length=min_length))
        assert generated.shape[1] <= 8 and (generated[:, 0] == model.config.decoder_start_token_id).all()
        assert not (generated[:, 1:min_length] == tokenizer.eos_token_id).any()


def test_a_saved_causal_model_loads_through_the_seq2seq_auto_class(setup, tmp_path):
    _, tokenizer, model, encoded = setup
    model.save_pretrained(tmp_path)
    loaded = AutoModelForSeq2SeqLM.from_pretrained(tmp_path)
    assert isinstance(loaded, PromptCompletionLM)
    batch = DataCollatorForSeq2Seq(tokenizer, model=model)(encoded)
    with torch.no_grad():
        assert torch.equal(loaded(**batch).logits, model(**batch).logits)


def test_completions_end_with_eos_even_when_the_tokenizer_adds_none(setup):
    """A causal LM's tokenizer (Qwen, Llama) adds no EOS to a target; the labels get one, within the limit."""
    records, tokenizer, _, encoded = setup
    bare = copy.deepcopy(tokenizer)
    bare._tokenizer.post_processor = None  # as a decoder-only model's tokenizer: no EOS appended
    plain = encode_records(records, bare, LENGTH, LENGTH)
    assert [e["labels"] for e in plain] == [e["labels"] for e in encoded]
    assert all(len(e["labels"]) <= LENGTH and e["labels"][-1] == tokenizer.eos_token_id for e in plain)


def test_a_pretrained_causal_lm_loads_by_name_as_a_task_names_it(setup, tmp_path):
    """The pretrained path (kind pretrained, architecture causal): a causal LM saved in the hub's format
    (its own weights and config, no wrapper) is loaded through AutoModelForCausalLM and wrapped."""
    _, tokenizer, model, encoded = setup
    model.language_model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    settings = {"kind": "pretrained", "architecture": "causal", "name_or_path": str(tmp_path)}
    loaded = initial_model(settings, load_tokenizer(tmp_path))
    assert isinstance(loaded, PromptCompletionLM) and loaded.config.language_model.model_type == "qwen2"
    batch = DataCollatorForSeq2Seq(tokenizer, model=model)(encoded)
    with torch.no_grad():
        assert torch.equal(loaded.eval()(**batch).logits, model(**batch).logits)


def test_policy_gradient_on_a_causal_model_is_reinforce_by_hand(setup, tmp_path, monkeypatch):
    """On-policy PG (Table 4) on a causal model: the reward scores the sampled completion alone (never the
    prompt), and the gradient is -(R - b) grad log p(completion | prompt), log p from the language model
    on the one prompt + completion sequence."""
    from transformers import Seq2SeqTrainingArguments

    from gold_textgen.evaluation.decoding import generation_config
    from gold_textgen.objectives.policy_gradient import RewardBaseline
    from gold_textgen.training.fine_tune_trainer import FineTuneTrainer
    from gold_textgen.training.helper_models import HelperModels
    from gold_textgen.training.on_policy import OnPolicySampling

    _, tokenizer, model, encoded = setup
    example = {k: encoded[0][k] for k in ("input_ids", "attention_mask", "labels")}
    batch = DataCollatorForSeq2Seq(tokenizer, model=model)([example])
    completion = [*example["labels"][:3], tokenizer.eos_token_id]
    sample = torch.tensor([[model.config.decoder_start_token_id, *completion]])
    monkeypatch.setattr(model, "generate", lambda **inputs: sample)
    scored = []

    def reward(hypotheses, references):
        scored.append(hypotheses)
        return np.array([0.8])

    lengths = {"max_new_tokens": 8, "min_new_tokens": 0, "no_repeat_ngram_size": 0}
    sampling = OnPolicySampling(generation_config(model, lengths, {"do_sample": True, "top_k": 0}), tokenizer, reward, RewardBaseline(0.3))
    arguments = Seq2SeqTrainingArguments(output_dir=str(tmp_path), report_to="none", use_cpu=True, remove_unused_columns=False)
    gold = objective_settings(loss="policy_gradient", baseline=0.3)
    trainer = FineTuneTrainer(model=model, args=arguments, processing_class=tokenizer, helpers=HelperModels(gold, sampling=sampling))
    model.train()
    try:
        model.zero_grad()
        trainer.policy_gradient_loss(model, dict(batch)).backward()
        assert scored == [[tokenizer.decode(completion, skip_special_tokens=True)]]
        from_trainer = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        log_p = completion_logprobs_by_hand(model, {"input_ids": example["input_ids"], "labels": completion}, grad=True).sum()
        (-(0.8 - 0.3) * log_p).backward()
        for by_trainer, parameter in zip(from_trainer, model.parameters(), strict=True):
            assert torch.allclose(by_trainer, parameter.grad, atol=1e-6, rtol=1e-4)
    finally:
        model.zero_grad()
        model.eval()


def test_a_left_padding_tokenizer_gives_the_same_losses_nll_and_generations(setup, tmp_path):
    """Llama-, Gemma- and Cohere-family tokenizers pad on the left by default: the project loads every
    tokenizer padding on the right, and the model takes prompts padded either way to the same logits."""
    records, tokenizer, model, encoded = setup
    tokenizer.save_pretrained(tmp_path / "left")
    config = tmp_path / "left" / "tokenizer_config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "padding_side": "left"}))
    assert AutoTokenizer.from_pretrained(tmp_path / "left").padding_side == "left"  # its own default
    loaded = load_tokenizer(tmp_path / "left")
    assert loaded.padding_side == "right"
    right = DataCollatorForSeq2Seq(loaded, model=model)(encoded)
    loaded.padding_side = "left"  # as the tokenizer would pad if left to itself
    left = DataCollatorForSeq2Seq(loaded, model=model)([{k: v for k, v in e.items() if k != "labels"} for e in encoded])
    assert not torch.equal(left["input_ids"], right["input_ids"])  # the prompts really are padded differently
    with torch.no_grad():
        by_right = model(input_ids=right["input_ids"], attention_mask=right["attention_mask"], labels=right["labels"]).logits
        by_left = model(input_ids=left["input_ids"], attention_mask=left["attention_mask"], labels=right["labels"]).logits
    assert torch.allclose(by_left, by_right, atol=1e-5)
    search = GenerationConfig(max_length=LENGTH + 2, min_length=1, num_beams=1, do_sample=False)
    with torch.no_grad():
        generated_left = model.generate(left["input_ids"], left["attention_mask"], generation_config=search)
        generated_right = model.generate(right["input_ids"], right["attention_mask"], generation_config=search)
    assert torch.equal(generated_left, generated_right)
    loaded.padding_side = "right"
    assert token_nll_table(model, loaded, records, LENGTH, LENGTH, batch_size=5).equals(
        token_nll_table(model, tokenizer, records, LENGTH, LENGTH, batch_size=5)
    )


def test_a_tokenizer_that_adds_bos_keeps_it_out_of_the_labels(setup):
    """A Llama-family tokenizer puts BOS before every text: the prompt keeps it (the model was trained to
    read it), the labels do not (the model would learn to emit BOS after the prompt). The labels, the
    cut-reference count and the token table's tokens equal those of a tokenizer without BOS, and the
    table's losses are the model's on the prompt with BOS and the labels without."""
    records, tokenizer, model, encoded = setup
    with_bos = copy.deepcopy(tokenizer)
    start, end = tokenizer.bos_token_id, tokenizer.eos_token_id
    with_bos._tokenizer.post_processor = TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", start), ("</s>", end)])
    assert with_bos(text_target="a b")["input_ids"][0] == start  # it really adds one
    causal = encode_records(records, with_bos, LENGTH, LENGTH, causal=True)
    assert [e["labels"] for e in causal] == [e["labels"] for e in encoded]
    assert all(e["input_ids"][0] == start for e in causal)
    assert encode_records(records, with_bos, LENGTH, LENGTH)[0]["labels"][0] == start  # a seq2seq target keeps it (BART)
    assert references_cut(records, with_bos, 4, causal=True) == references_cut(records, tokenizer, 4)
    table = token_nll_table(model, with_bos, records, LENGTH, LENGTH, batch_size=5, causal=True)
    plain = token_nll_table(model, tokenizer, records, LENGTH, LENGTH, batch_size=5)
    assert table[["example", "position", "token_id"]].equals(plain[["example", "position", "token_id"]])
    by_hand = np.concatenate([-completion_logprobs_by_hand(model, example).numpy() for example in causal])
    assert np.allclose(table["nll"].to_numpy(), by_hand, atol=1e-5)
