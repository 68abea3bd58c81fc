"""On-policy fine-tuning: rewards scored as the tables score, REINFORCE's gradient, the baseline, and the
labels made from samples."""

import math

import pytest
import torch
from settings import TINY_MODEL

from gold_textgen.data.tokenization import train_tokenizer
from gold_textgen.evaluation.metrics import Scoring, sentence_rewards, task_metric
from gold_textgen.models.transformer import build_scratch_model
from gold_textgen.objectives.policy_gradient import RewardBaseline, is_policy_gradient_update, reinforce_loss_sum
from gold_textgen.objectives.weighted_nll import reference_logprobs
from gold_textgen.training.on_policy import sampled_labels

PAIRS = [
    ("the cat sat on the mat", "the cat sat on the mat"),
    ("a cat sat on a mat today", "the cat sat on the mat"),
    ("dogs bark loudly", "the cat sat on the mat"),
    ("the cat is on the mat . it sleeps .", "the cat sat on the mat . it sleeps ."),
]


@pytest.mark.parametrize("metric", ["bleu", "rouge2"])
@pytest.mark.parametrize("scoring", [Scoring(), Scoring(bleu_tokenize="none", rouge="files2rouge")])
def test_each_reward_is_the_table_scorer_on_that_pair_alone(metric, scoring):
    hypotheses, references = zip(*PAIRS, strict=True)
    rewards = sentence_rewards(metric, list(hypotheses), list(references), scoring)
    expected = [task_metric(metric, [h], [r], scoring) / 100 for h, r in PAIRS]
    assert rewards == pytest.approx(expected, abs=1e-9)
    assert rewards[0] == pytest.approx(1.0) and rewards[2] == 0.0 and 0 < rewards[1] < 1


def test_reinforce_gradient_is_the_reward_weighted_score_function():
    """With one sample the loss's gradient is -(R - b) grad log p(sample), log p summed token by token from
    the model's next-token distribution as decoding sees it."""
    tokenizer = train_tokenizer(["a b c d e f g h"])
    torch.manual_seed(0)
    model = build_scratch_model(TINY_MODEL, tokenizer)
    source = tokenizer(["a b c"], return_tensors="pt")
    start = model.config.decoder_start_token_id
    sample = [tokenizer.convert_tokens_to_ids(t) for t in ("d", "e", "f")] + [tokenizer.eos_token_id]
    reward, baseline = 0.7, 0.1

    model.zero_grad()
    decoder_inputs = torch.tensor([[start, *sample[:-1]]])
    logits = model(**source, decoder_input_ids=decoder_inputs).logits
    labels = torch.tensor([sample])
    loss = reinforce_loss_sum(reference_logprobs(torch.log_softmax(logits, -1), labels), labels.ne(-100), torch.tensor([reward]), baseline)
    loss.backward()
    ours = [p.grad.clone() for p in model.parameters() if p.grad is not None]

    model.zero_grad()
    log_p = 0.0
    for t, token in enumerate(sample):  # one decoder pass per prefix
        step = model(**source, decoder_input_ids=torch.tensor([[start, *sample[:t]]])).logits[0, -1]
        log_p = log_p + torch.log_softmax(step, -1)[token]
    (-(reward - baseline) * log_p).backward()
    by_hand = [p.grad.clone() for p in model.parameters() if p.grad is not None]
    assert len(ours) == len(by_hand) and all(torch.allclose(a, b, atol=1e-6) for a, b in zip(ours, by_hand, strict=True))
    assert math.isclose(float(loss.detach()), -(reward - baseline) * float(log_p.detach()), rel_tol=1e-5)


def test_padding_after_eos_adds_nothing():
    logprobs = torch.tensor([[-1.0, -2.0, -3.0], [-0.5, -0.5, -9.0]])
    mask = torch.tensor([[True, True, True], [True, True, False]])
    loss = reinforce_loss_sum(logprobs, mask, torch.tensor([1.0, 0.5]), 0.5)
    assert float(loss) == pytest.approx(-(0.5 * -6.0 + 0.0 * -1.0))


def test_moving_average_baseline_over_a_known_stream():
    baseline = RewardBaseline(constant=0.1, margin=0.05, window=3)
    assert baseline.value == 0.1  # no reward yet: the constant
    for reward in (0.1, 0.2, 0.3, 0.4):
        baseline.record(reward)
    assert baseline.value == pytest.approx((0.2 + 0.3 + 0.4) / 3 - 0.05)
    restored = RewardBaseline(constant=0.1, margin=0.05, window=3)
    restored.load_state_dict(baseline.state_dict())
    assert restored.value == baseline.value
    assert RewardBaseline(constant=0.15).value == 0.15  # constant baseline ignores the rewards


def test_updates_alternate_evenly():
    kinds = [is_policy_gradient_update(step) for step in range(10)]
    assert kinds.count(True) == kinds.count(False) == 5 and kinds[:2] == [False, True]


def test_sampled_labels_end_at_the_first_eos():
    eos, pad = 2, 1
    tokens = torch.tensor([[5, 6, eos, pad, pad], [5, eos, 7, eos, pad], [5, 6, 7, 8, 9]])
    assert sampled_labels(tokens, eos, pad).tolist() == [[5, 6, eos, -100, -100], [5, eos, -100, -100, -100], [5, 6, 7, 8, 9]]


@pytest.mark.parametrize("task_lengths", [False, True])
def test_samples_come_from_the_policy_unless_the_task_lengths_are_asked_for(task_lengths):
    """A minimum length or a no-repeat rule changes the distribution samples are drawn from: by default only
    the maximum length limits them; `sample_with_task_lengths: true` applies the task's rules as decoding does."""
    from types import SimpleNamespace

    from conftest import tiny_task
    from settings import objective_settings
    from transformers import GenerationConfig

    from gold_textgen.training.fine_tune import on_policy_sampling

    task = tiny_task(TINY_MODEL)
    task["generation"].update(max_new_tokens=40, min_new_tokens=5, no_repeat_ngram_size=3)
    objective = objective_settings(loss="policy_gradient", baseline=0.05, sample_with_task_lengths=task_lengths)
    sampling = on_policy_sampling(task, objective, SimpleNamespace(generation_config=GenerationConfig()), tokenizer=None)
    config = sampling.generation
    assert (config.do_sample, config.top_k, config.max_length) == (True, 0, 42)
    assert (config.min_length, config.no_repeat_ngram_size) == ((6, 3) if task_lengths else (1, 0))
