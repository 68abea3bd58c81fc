"""The paper's standard models (NQG++, the pointer-generator): sizes, the copy distribution, copying of
unknown words, the search against exhaustive enumeration, and GOLD's loss on them."""

import itertools
import math
import random

import pytest
import torch
from settings import every_trainable_loss, objective_settings, tiny_recurrent
from transformers import DataCollatorForSeq2Seq, GenerationConfig, Seq2SeqTrainingArguments

from gold_textgen.data.copy_vocabulary import CopyVocabulary
from gold_textgen.data.records import DataFormatError
from gold_textgen.data.seq2seq_batches import PaddedFieldsCollator, tokenize_records
from gold_textgen.data.token_features import feature_sizes
from gold_textgen.data.tokenization import train_tokenizer
from gold_textgen.evaluation.decoding import generate_texts, generation_config
from gold_textgen.evaluation.token_nll import token_nll_table
from gold_textgen.models.copy_attention import TINY, CopyDistribution, first_occurrences
from gold_textgen.models.recurrent import RecurrentSeq2SeqConfig, RecurrentSeq2SeqModel
from gold_textgen.models.transformer import count_parameters, initial_model
from gold_textgen.objectives.gold import after_eos_term, importance_weights, per_token_rewards, windowed_returns
from gold_textgen.objectives.loss_truncation import LossTruncation
from gold_textgen.objectives.weighted_nll import reference_logprobs, weighted_nll
from gold_textgen.training.fine_tune_trainer import REWARD_FIELD, FineTuneTrainer
from gold_textgen.training.helper_models import HelperModels, model_from_weights
from gold_textgen.training.reward_cache import attach_cached_rewards

LENGTHS = {"max_new_tokens": 8, "min_new_tokens": 1, "no_repeat_ngram_size": 0, "length_penalty": 1.0}


def paper_sized(architecture: str, vocabulary: int, **values) -> RecurrentSeq2SeqModel:
    """FocusSeq2Seq's sizes as its README runs NQG++ (GRU, features) and the pointer-generator (LSTM,
    coverage): embeddings 300, encoder 512, decoder 512, attention 700, features 16, tied output layer."""
    config = RecurrentSeq2SeqConfig(
        architecture=architecture, vocab_size=vocabulary, pad_token_id=1, bos_token_id=0, eos_token_id=2, **values
    )
    return RecurrentSeq2SeqModel(config)


def test_paper_sized_models_have_the_papers_parameter_counts(capsys):
    """Appendix B: NQG++ 10,372,565 parameters (20,000 words), pointer-generator 19,965,705 (50,000)."""
    nqg = count_parameters(paper_sized("nqg_pp", 20000, feature_sizes=feature_sizes(["answer", "case", "pos", "ner"])))
    pointer = count_parameters(paper_sized("pointer_generator", 50000, coverage=True))
    with capsys.disabled():
        print(f"\nNQG++ {nqg:,} parameters (paper 10,372,565); pointer-generator {pointer:,} (paper 19,965,705)")
    assert (nqg, pointer) == (10_372_565, 19_965_705)
    # Copy placeholders add output slots, not parameters.
    assert count_parameters(paper_sized("pointer_generator", 50000, coverage=True, copy_slots=400)) == pointer


def test_the_copy_mixture_by_hand():
    """V = 3 words and 2 placeholders; generation softmax (1/4, 1/2, 1/4); attention (.5, .3, .2) on source
    ids (1, 3, 1): word 1 is in the vocabulary and twice in the source, placeholder 3 once; g = 0.6."""
    logits = torch.tensor([[0.0, math.log(2.0), 0.0]])
    attention = torch.tensor([[0.5, 0.3, 0.2]])
    source = torch.tensor([[1, 3, 1]])
    first = first_occurrences(source)
    assert first.tolist() == [[0, 1, 0]]
    share = torch.tensor([[math.log(0.6 / 0.4)]])  # g = sigmoid(share) = 0.6
    distribution = CopyDistribution(logits, attention, source, first, share, size=5)
    expected = torch.tensor([[0.6 * 0.25, 0.6 * 0.5 + 0.4 * 0.7, 0.6 * 0.25, 0.4 * 0.3, TINY]])
    assert torch.allclose(distribution.log_probs().exp(), expected, atol=1e-7)
    every_id = torch.arange(5).view(5, 1)
    repeated = CopyDistribution(logits.expand(5, 3), attention.expand(5, 3), source.expand(5, 3), first.expand(5, 3), share.expand(5, 1), 5)
    assert torch.allclose(repeated.log_likelihood(every_id.squeeze(1)).exp(), expected.squeeze(0), atol=1e-7)
    without_copy = CopyDistribution(logits, attention, source, first, None, size=5).log_probs().exp()
    assert torch.allclose(without_copy, torch.tensor([[0.25, 0.5, 0.25, TINY, TINY]]), atol=1e-7)


@pytest.mark.parametrize("architecture", ["nqg_pp", "pointer_generator"])
def test_shapes_and_a_normalised_distribution(architecture):
    torch.manual_seed(0)
    tokenizer = train_tokenizer(["a b c d e"], copy_slots=3)
    model = initial_model(tiny_recurrent(architecture, coverage=architecture == "pointer_generator", coverage_loss_weight=1.0), tokenizer)
    records = [{"id": 1, "source": "a b zz", "target": "b zz yy"}, {"id": 2, "source": "c", "target": "d e a c"}]
    batch = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer, model=model))(list(tokenize_records(records, tokenizer, 10, 10)))
    output = model(**batch)
    assert output.logits.shape == (2, 5, len(tokenizer))  # 5 labels: 4 words + EOS; extended vocabulary
    assert torch.allclose(output.logits.exp().sum(-1), torch.ones(2, 5), atol=1e-5)
    assert torch.isfinite(output.loss)
    if architecture == "pointer_generator":
        assert output.coverage_losses.shape == (2, 5)
    else:
        assert output.coverage_losses is None


def test_the_copy_vocabulary_encodes_and_restores_unknown_words():
    tokenizer = train_tokenizer(["the cat sat"], copy_slots=2)
    vocabulary = CopyVocabulary(tokenizer)
    pair = vocabulary.encode("zorg the blorp cat zorg quux", "who saw zorg and quux ?", 20, 20)
    slot = vocabulary.slot_ids
    ids = tokenizer.convert_tokens_to_ids
    assert pair.oov_words == ["zorg", "blorp"]  # two slots: quux reads as <unk>
    assert pair.input_ids == [slot[0], ids("the"), slot[1], ids("cat"), slot[0], tokenizer.unk_token_id, tokenizer.eos_token_id]
    unk = tokenizer.unk_token_id
    assert pair.labels == [unk, unk, slot[0], unk, unk, unk, tokenizer.eos_token_id]  # only source words copy
    text = tokenizer.decode([slot[1], ids("cat"), slot[0]], skip_special_tokens=True)
    assert vocabulary.restore(text, pair.oov_words) == "blorp cat zorg"
    assert vocabulary.restore(text, None) == "copy1 cat copy0"


def copy_task(count: int, seed: int) -> list[dict]:
    """Sources of 3-6 words drawn from 30 (a tokenizer that knows only 20 of them); target = source."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(30)]
    records = []
    for index in range(count):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(3, 6)))
        records.append({"id": index, "source": text, "target": text})
    return records


def train_briefly(model, tokenizer, records, steps: int, features=()):
    dataset = tokenize_records(records, tokenizer, 12, 12, features)
    collate = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer, model=model))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model.train()
    for step in range(steps):
        batch = collate([dataset[(step * 32 + j) % len(dataset)] for j in range(32)])
        loss = model(**batch).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return float(loss.detach())


@pytest.mark.parametrize("architecture", [pytest.param("nqg_pp", marks=pytest.mark.slow), "pointer_generator"])
def test_a_word_never_seen_in_training_is_copied_and_not_without_copying(architecture):
    known = " ".join(f"w{i}" for i in range(20))
    unseen = [{"id": 0, "source": "w1 zebra w2", "target": ""}, {"id": 1, "source": "giraffe w5 w3 okapi", "target": ""}]
    outputs = {}
    for copy in (True, False):
        torch.manual_seed(0)
        tokenizer = train_tokenizer([known], copy_slots=8 if copy else 0)
        model = initial_model(tiny_recurrent(architecture, encoder_hidden=32, decoder_hidden=32, copy=copy), tokenizer)
        # Without copying no word outside the vocabulary can come out however long the model trains, so a
        # short run suffices for the check below.
        final_loss = train_briefly(model, tokenizer, copy_task(2000, seed=0), steps=175 if copy else 30)
        greedy = generation_config(model, LENGTHS, {"num_beams": 1})
        outputs[copy] = (final_loss, generate_texts(model, tokenizer, unseen, greedy, 8, 12))
    loss, texts = outputs[True]
    assert loss < 0.05, loss  # converged: the copy task is learnt
    assert texts == ["w1 zebra w2", "giraffe w5 w3 okapi"]
    _, without = outputs[False]
    assert not any(word in text.split() for text in without for word in ("zebra", "giraffe", "okapi")), without


def exhaustive_best(model, input_ids: torch.Tensor, config: GenerationConfig, length_penalty: float) -> list[int]:
    """The best output by enumeration: every sequence of producible tokens ending in EOS (not before
    min_length), or cut at the length limit, scored sum log p / length ** length_penalty."""
    eos, start = model.config.eos_token_id, model.config.decoder_start_token_id
    tokens = [t for t in range(model.config.output_size) if t not in (model.config.pad_token_id, start, eos, model.config.unk_token_id)]
    tokens = [t for t in tokens if t < model.config.vocab_size or t in input_ids.tolist()[0]]
    longest = config.max_length - 1
    candidates = [[*prefix, eos] for n in range(longest) for prefix in itertools.product(tokens, repeat=n)]
    # EOS may end a sequence once it is min_length long, start token included (generate()'s rule).
    candidates = [c for c in candidates if len(c) >= config.min_length] + [list(p) for p in itertools.product(tokens, repeat=longest)]
    width = max(len(c) for c in candidates)
    labels = torch.tensor([c + [-100] * (width - len(c)) for c in candidates])
    with torch.no_grad():
        logits = model(input_ids=input_ids.expand(len(candidates), -1), labels=labels).logits
    sums = reference_logprobs(logits, labels).sum(-1)
    scores = [float(s) / len(c) ** length_penalty for s, c in zip(sums, candidates, strict=True)]
    return [start] + candidates[max(range(len(candidates)), key=scores.__getitem__)]


@pytest.mark.parametrize("length_penalty", [1.0, 0.0, 2.0])
@pytest.mark.parametrize("architecture", ["nqg_pp", "pointer_generator"])
def test_beam_search_equals_exhaustive_search_on_a_tiny_vocabulary(architecture, length_penalty):
    torch.manual_seed(3)
    tokenizer = train_tokenizer(["a b"], copy_slots=2)
    model = initial_model(tiny_recurrent(architecture, coverage=architecture == "pointer_generator"), tokenizer).eval()
    input_ids = torch.tensor([tokenizer("a zz")["input_ids"]])  # a, placeholder 0, EOS
    config = GenerationConfig(max_length=5, min_length=2, num_beams=400, length_penalty=length_penalty)
    beam = model.generate(input_ids=input_ids, generation_config=config)[0].tolist()
    expected = exhaustive_best(model, input_ids, config, length_penalty)
    assert beam[: len(expected)] == expected
    assert all(token == tokenizer.pad_token_id for token in beam[len(expected) :])


@pytest.mark.parametrize("decoder", [{"num_beams": 3}, {"num_beams": 1}])
def test_a_batch_decodes_as_its_inputs_one_by_one(decoder):
    torch.manual_seed(1)
    tokenizer = train_tokenizer(["a b c d e f"], copy_slots=4)
    model = initial_model(tiny_recurrent("pointer_generator", coverage=True), tokenizer).eval()
    records = [{"id": i, "source": s, "target": ""} for i, s in enumerate(["a b c d zz", "e", "f yy a"])]
    config = generation_config(model, LENGTHS, decoder)
    together = generate_texts(model, tokenizer, records, config, 8, 12)
    alone = [generate_texts(model, tokenizer, [record], config, 8, 12)[0] for record in records]
    assert together == alone


@pytest.mark.parametrize("decoder", [{"num_beams": 1}, {"num_beams": 3}, {"do_sample": True, "top_k": 5}, {"do_sample": True, "top_k": 0}])
def test_unk_is_never_generated_even_when_the_model_prefers_it(decoder, monkeypatch):
    """FocusSeq2Seq forbids UNK in every search; an unknown source word is still copied (its placeholder)."""
    torch.manual_seed(1)
    tokenizer = train_tokenizer(["a b c d e f"], copy_slots=4)
    model = initial_model(tiny_recurrent("pointer_generator"), tokenizer).eval()
    step = model.step

    def prefers_unk(*args, **kwargs):
        log_probs, state, extra = step(*args, **kwargs)
        return log_probs.index_add(1, torch.tensor([model.config.unk_token_id]), torch.full_like(log_probs[:, :1], 50.0)), state, extra

    monkeypatch.setattr(model, "step", prefers_unk)
    records = [{"id": i, "source": s, "target": ""} for i, s in enumerate(["a b zz", "e yy f", "c"])]
    config = generation_config(model, LENGTHS, decoder)
    ids = [tokenizer(r["source"])["input_ids"] for r in records]
    outputs = model.generate(input_ids=torch.tensor([i + [tokenizer.pad_token_id] * (4 - len(i)) for i in ids]), generation_config=config)
    assert model.config.unk_token_id not in outputs.tolist()[0] + outputs.tolist()[1] + outputs.tolist()[2]
    assert all(generate_texts(model, tokenizer, records, config, 8, 12, 1))  # the best allowed tokens, not empty outputs


def test_token_features_reach_the_model_and_bad_tags_name_the_record():
    torch.manual_seed(0)
    tokenizer = train_tokenizer(["the cat sat on the mat"], copy_slots=4)
    features = ["answer", "case"]
    record = {
        "id": "q1",
        "source": "the cat sat",
        "target": "who sat ?",
        "token_features": {"answer": ["O", "B", "O"], "case": ["UP", "LOW", "LOW"]},
    }
    dataset = tokenize_records([record], tokenizer, 10, 10, features)
    assert dataset[0]["answer_tags"] == [1, 2, 1, 0] and dataset[0]["case_tags"] == [2, 1, 1, 0]  # EOS reads padding
    model = initial_model(tiny_recurrent("nqg_pp", features=features), tokenizer, feature_sizes(features))
    batch = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer, model=model))([dataset[0]])
    changed = dict(batch, answer_tags=torch.tensor([[1, 1, 2, 0]]))
    assert not torch.allclose(model(**batch).logits, model(**changed).logits)  # the answer position matters
    with pytest.raises(DataFormatError, match="record q1: unknown case tag 'MIXED'"):
        tokenize_records([{**record, "token_features": {**record["token_features"], "case": ["MIXED"] * 3}}], tokenizer, 10, 10, features)
    with pytest.raises(DataFormatError, match="record q1: the model reads the token feature 'pos'"):
        tokenize_records([record], tokenizer, 10, 10, ["pos"])


def test_gold_loss_on_a_copy_model_equals_the_objective_functions(tmp_path):
    """GOLD-s with a lag and cached rewards on a pointer-generator with coverage: the trainer's loss is
    weighted_nll over the copy distribution, plus the weighted coverage loss, over the reference tokens."""
    torch.manual_seed(0)
    records = copy_task(16, seed=1)
    tokenizer = train_tokenizer([" ".join(f"w{i}" for i in range(20))], copy_slots=6)
    model = initial_model(tiny_recurrent("pointer_generator", coverage=True, coverage_loss_weight=0.5), tokenizer)
    lagged = model_from_weights(model)
    with torch.no_grad():
        for parameter in lagged.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))  # pi_tilde differs from the policy
    rewards = token_nll_table(model_from_weights(model), tokenizer, records, 12, 12, batch_size=4)  # p_MLE: the starting model
    dataset = attach_cached_rewards(tokenize_records(records, tokenizer, 12, 12), rewards)
    settings = objective_settings(reward="s", min_weight=0.1, floor=0.05, label_smoothing=0.1)
    arguments = Seq2SeqTrainingArguments(output_dir=str(tmp_path), report_to="none", use_cpu=True, remove_unused_columns=False)
    collate = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer, model=model), label_fields=(REWARD_FIELD,))
    trainer = FineTuneTrainer(
        model=model, args=arguments, data_collator=collate, processing_class=tokenizer, helpers=HelperModels(settings, lagged=lagged)
    )
    batch = collate([dataset[i] for i in range(8)])
    model.train()  # no dropout in this model: train mode only selects the training loss
    with torch.no_grad():
        loss = trainer.compute_loss(model, dict(batch))
        labels, cached = batch["labels"], batch[REWARD_FIELD]
        inputs = {k: v for k, v in batch.items() if k not in ("labels", REWARD_FIELD)}
        mask = labels.ne(-100)
        outputs = model(**inputs)
        weights = importance_weights(reference_logprobs(torch.log_softmax(lagged(**inputs).logits, -1), labels), settings.min_weight)
        terms = per_token_rewards(cached.exp(), "s", settings.floor, settings.baseline, settings.horizon)
        returns = windowed_returns(terms, mask, settings.horizon, settings.gamma, after_eos_term(settings.baseline, settings.horizon))
        parts = weighted_nll(torch.log_softmax(outputs.logits, -1), labels, weights, returns, settings.label_smoothing)
        coverage = 0.5 * outputs.coverage_losses[mask].sum()
    assert coverage > 0
    assert torch.allclose(loss, (parts.loss_sum + coverage) / parts.num_tokens, rtol=1e-5)


@pytest.mark.parametrize("architecture", ["nqg_pp", "pointer_generator"])
def test_every_sweep_decoder_runs_and_sampling_follows_its_settings(architecture):
    """Top-k 1 sampling is greedy search whatever the seed; top-k, top-p and temperature sampling are
    reproducible from their sample seed and differ from greedy for some seed; beams of 3 and 5 decode."""
    torch.manual_seed(2)
    tokenizer = train_tokenizer([" ".join(f"w{i}" for i in range(12))], copy_slots=4)
    model = initial_model(tiny_recurrent(architecture), tokenizer).eval()
    records = [{"id": i, "source": s, "target": ""} for i, s in enumerate(["w1 w2 w3", "w4 zz w5 w6", "w7"])]

    def decode(decoder: dict, seed: int = 0) -> list[str]:
        return generate_texts(model, tokenizer, records, generation_config(model, LENGTHS, decoder), 8, 12, seed)

    greedy = decode({"num_beams": 1})
    assert decode({"do_sample": True, "top_k": 1}, seed=5) == greedy
    for sampling in (
        {"do_sample": True, "top_k": 5},
        {"do_sample": True, "top_k": 0, "top_p": 0.9},
        {"do_sample": True, "temperature": 2.0},
    ):
        assert decode(sampling, seed=3) == decode(sampling, seed=3)
        assert any(decode(sampling, seed=seed) != greedy for seed in range(1, 4)), sampling
    for beams in (3, 5):
        assert len(decode({"num_beams": beams})) == 3


@pytest.mark.parametrize("architecture", ["nqg_pp", "pointer_generator"])
def test_every_reference_objective_trains_a_copy_model(tmp_path, architecture):
    """Every loss of the grid that trains on the references runs on the copy models' extended vocabulary
    (placeholders the source lacks have probability 0): a finite loss and finite, non-zero gradients."""
    torch.manual_seed(0)
    records = copy_task(8, seed=3)
    tokenizer = train_tokenizer([" ".join(f"w{i}" for i in range(20))], copy_slots=6)
    model = initial_model(tiny_recurrent(architecture), tokenizer)
    frozen = model_from_weights(model)
    with torch.no_grad():
        for parameter in frozen.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))  # pi_tilde / the anchor differ from the policy
    collate = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer, model=model))
    batch = collate(list(tokenize_records(records, tokenizer, 12, 12)))
    arguments = Seq2SeqTrainingArguments(output_dir=str(tmp_path), report_to="none", use_cpu=True, remove_unused_columns=False)
    losses = every_trainable_loss()
    model.train()
    for loss, settings in losses.items():
        gold = objective_settings(loss=loss, rewards="online", label_smoothing=0.1, **settings)
        trainer = FineTuneTrainer(
            model=model,
            args=arguments,
            processing_class=tokenizer,
            helpers=HelperModels(gold, lagged=frozen, frozen=frozen, truncation=LossTruncation(drop_fraction=0.4, warmup=1, window=4)),
        )
        model.zero_grad()
        value = trainer.compute_loss(model, dict(batch))
        value.backward()
        gradients = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])
        assert torch.isfinite(value), loss
        assert torch.isfinite(gradients).all() and gradients.abs().sum() > 0, loss


def test_a_fresh_nqg_pp_is_initialised_as_focusseq2seq_does():
    """train.py: vectors ~ N(0, 6 / (1 + n)), matrices Xavier-normal with gain sqrt(3); sample std within 10%."""
    torch.manual_seed(0)
    model = paper_sized("nqg_pp", 20000, feature_sizes=feature_sizes(["answer", "case", "pos", "ner"]))
    checked = 0
    for name, parameter in model.named_parameters():
        if name == "attention.bias":  # [1, 1, A] there: Xavier over that shape
            expected = math.sqrt(3 / parameter.numel())
        elif parameter.dim() == 1:
            expected = math.sqrt(6 / (1 + parameter.shape[0]))
        else:
            fan_out, fan_in = parameter.shape[0], parameter.shape[1]
            expected = math.sqrt(3) * math.sqrt(2 / (fan_in + fan_out))
        if parameter.numel() >= 400:  # enough draws for a 10% bound on the sample std
            assert parameter.std().item() == pytest.approx(expected, rel=0.1), name
            assert abs(parameter.mean().item()) < 0.2 * expected, name
            checked += 1
    assert checked >= 15 and model.output_projection.weight is model.embeddings.weight  # tied: one initialisation


def test_a_fresh_pointer_generator_is_initialised_as_focusseq2seq_does():
    """utils/initializer.py: embeddings and bridges N(0, 1e-4); LSTM weights U(-0.02, 0.02), biases 0 with
    the forget gate's quarter at 1; the attention bias torch.randn."""
    torch.manual_seed(0)
    model = paper_sized("pointer_generator", 5000, coverage=True)
    for name in ("embeddings.weight", "bridge.weight", "bridge.bias", "bridge_cell.weight", "bridge_cell.bias"):
        assert model.get_parameter(name).std().item() == pytest.approx(1e-4, rel=0.1), name
    for lstm in (model.encoder, model.decoder_cell):
        for name, parameter in lstm.named_parameters():
            if name.startswith("weight_"):
                assert parameter.abs().max().item() <= 0.02 and parameter.std().item() == pytest.approx(0.02 / math.sqrt(3), rel=0.05)
            else:
                quarter = parameter.shape[0] // 4
                forget = torch.zeros_like(parameter)
                forget[quarter : 2 * quarter] = 1.0
                assert torch.equal(parameter, forget)
    assert model.attention.bias.std().item() == pytest.approx(1.0, rel=0.15)


def test_early_stopping_ends_a_beam_once_num_beams_hypotheses_ended():
    """FocusSeq2Seq's rule (early_stopping true) against the exact bound: raw sums (length penalty 0)."""
    from gold_textgen.models.recurrent_search import Finished

    for early_stopping, done_while_a_better_one_runs in ((True, True), (False, False)):
        finished = Finished(2, 0.0, early_stopping)
        finished.add([0, 5, 2], -3.0, 2)
        assert not finished.done(best_running=-1.0, generated=2, most_generated=10)
        finished.add([0, 6, 2], -4.0, 2)
        assert finished.done(best_running=-1.0, generated=3, most_generated=10) == done_while_a_better_one_runs
        assert finished.done(best_running=-5.0, generated=3, most_generated=10)


def test_policy_gradient_on_a_copy_model_is_reinforce_by_hand_and_scores_the_copied_word(tmp_path, monkeypatch):
    """Table 4 on the standard models: a sample that copies the source's unknown word `zz` (a placeholder) is
    scored with `zz`, and the trainer's gradient is -(R - b) grad log p(sample), log p summed step by step
    through the model's own decoding step (the copy mixture)."""
    import numpy as np

    from gold_textgen.objectives.policy_gradient import RewardBaseline
    from gold_textgen.training.on_policy import OnPolicySampling

    torch.manual_seed(0)
    tokenizer = train_tokenizer([" ".join(f"w{i}" for i in range(20))], copy_slots=6)
    model = initial_model(tiny_recurrent("pointer_generator", coverage=True), tokenizer)
    dataset = tokenize_records([{"id": 1, "source": "w1 zz w2", "target": "zz w1"}], tokenizer, 12, 12, keep_oov_words=True)
    batch = PaddedFieldsCollator(DataCollatorForSeq2Seq(tokenizer, model=model))([dataset[0]])
    assert batch["oov_words"] == [["zz"]]
    placeholder, w1 = CopyVocabulary(tokenizer).slot_ids[0], tokenizer.convert_tokens_to_ids("w1")
    sample = torch.tensor([[model.config.decoder_start_token_id, placeholder, w1, tokenizer.eos_token_id]])
    monkeypatch.setattr(model, "generate", lambda **inputs: sample)
    scored = []

    def reward(hypotheses, references):
        scored.append((hypotheses, references))
        return np.array([0.8])

    sampling = OnPolicySampling(generation_config(model, LENGTHS, {"do_sample": True, "top_k": 0}), tokenizer, reward, RewardBaseline(0.3))
    arguments = Seq2SeqTrainingArguments(output_dir=str(tmp_path), report_to="none", use_cpu=True, remove_unused_columns=False)
    gold = objective_settings(loss="policy_gradient", baseline=0.3)
    trainer = FineTuneTrainer(model=model, args=arguments, processing_class=tokenizer, helpers=HelperModels(gold, sampling=sampling))
    model.train()
    trainer.policy_gradient_loss(model, dict(batch)).backward()
    assert scored == [(["zz w1"], ["zz w1"])]
    from_trainer = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    encoded, state = model.encode(batch["input_ids"], batch["attention_mask"], {})
    log_p = 0.0
    for t in range(sample.shape[1] - 1):
        log_probs, state, _ = model.step(sample[:, t], state, encoded)
        log_p = log_p + log_probs[0, sample[0, t + 1]]
    (-(0.8 - 0.3) * log_p).backward()
    for by_trainer, parameter in zip(from_trainer, model.parameters(), strict=True):
        assert torch.allclose(by_trainer, parameter.grad, atol=1e-6, rtol=1e-4)
