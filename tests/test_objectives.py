"""Known-answer tests of GOLD's pure objective functions."""

import math

import pytest
import torch

from gold_textgen.objectives.gold import (
    after_eos_term,
    delta_returns,
    importance_weights,
    per_token_rewards,
    windowed_returns,
)
from gold_textgen.objectives.weighted_nll import weighted_nll


def test_importance_weight_is_floored_probability():
    logprobs = torch.log(torch.tensor([[0.5, 0.01, 1.0]]))
    assert torch.allclose(importance_weights(logprobs, min_weight=0.1), torch.tensor([[0.5, 0.1, 1.0]]))


def test_gold_p_terms_with_the_return_level_baseline():
    probs = torch.tensor([[math.exp(-2.0), math.exp(-30.0)]])
    terms = per_token_rewards(probs, "p", floor=1.0, baseline=-60.0, horizon=5)
    # per term: log p - (-60 / 6) = log p + 10, floored at 1
    assert torch.allclose(terms, torch.tensor([[8.0, 1.0]]), atol=1e-5)


def test_return_baseline_equals_per_term_baseline_without_floors():
    torch.manual_seed(0)
    probs = torch.rand(3, 9) * 0.5 + 0.5  # log p in (-0.7, 0]: no floor below -100 is ever active
    mask = torch.ones(3, 9, dtype=torch.bool)
    returns = windowed_returns(per_token_rewards(probs, "p", floor=-100.0, baseline=-60.0, horizon=5), mask, 5, 1.0)
    for t in range(3):  # positions whose whole window lies inside the sequence
        window = torch.log(probs[:, t : t + 6]).sum(dim=1)
        assert torch.allclose(returns[:, t], window + 60.0, atol=1e-4)


def test_gold_s_terms_floor_at_c():
    probs = torch.tensor([[0.9, 0.05]])
    assert torch.allclose(per_token_rewards(probs, "s", floor=0.1, baseline=0.0, horizon=5), torch.tensor([[0.9, 0.1]]))


def test_window_sums_current_and_next_horizon_terms():
    rewards = torch.arange(1.0, 9.0).unsqueeze(0)  # g = 1..8
    mask = torch.ones(1, 8, dtype=torch.bool)
    returns = windowed_returns(rewards, mask, horizon=2, gamma=1.0)
    assert returns.tolist() == [[6.0, 9.0, 12.0, 15.0, 18.0, 21.0, 15.0, 8.0]]


def test_window_discount():
    rewards = torch.ones(1, 4)
    returns = windowed_returns(rewards, torch.ones(1, 4, dtype=torch.bool), horizon=5, gamma=0.5)
    assert torch.allclose(returns, torch.tensor([[1.875, 1.75, 1.5, 1.0]]))


def test_after_eos_slots_add_nothing_and_batch_padding_does_not_matter():
    rewards = torch.tensor([[1.0, 2.0, 3.0, 9.0, 9.0], [1.0, 2.0, 3.0, 4.0, 5.0]])  # 9s sit on padding
    mask = torch.tensor([[True, True, True, False, False], [True, True, True, True, True]])
    returns = windowed_returns(rewards, mask, horizon=5, gamma=1.0)
    assert returns[0].tolist() == [6.0, 5.0, 3.0, 0.0, 0.0]
    alone = windowed_returns(rewards[:1, :3], mask[:1, :3], horizon=5, gamma=1.0)
    assert returns[0, :3].tolist() == alone[0].tolist()


def test_gold_p_returns_near_eos_subtract_the_baseline_once():
    # Every log p_MLE = -1, 8 reference tokens, b = -60, H = 5: a return is sum_j log p_{t+j} - b over the
    # tokens left in the window, i.e. -(tokens in window) + 60.
    probs = torch.full((1, 8), math.exp(-1.0))
    mask = torch.ones(1, 8, dtype=torch.bool)
    terms = per_token_rewards(probs, "p", floor=1.0, baseline=-60.0, horizon=5)
    returns = windowed_returns(terms, mask, 5, 1.0, after_eos_term(-60.0, 5))
    assert torch.allclose(returns, torch.tensor([[54.0, 54.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0]]), atol=1e-4)


def test_gold_p_returns_do_not_depend_on_the_rest_of_the_batch():
    torch.manual_seed(3)
    probs = torch.rand(3, 9) * 0.9 + 0.05
    mask = torch.tensor([[True] * 9, [True] * 4 + [False] * 5, [True] * 7 + [False] * 2])
    past_eos = after_eos_term(-60.0, 5)
    terms = per_token_rewards(probs, "p", floor=1.0, baseline=-60.0, horizon=5)
    together = windowed_returns(terms, mask, 5, 1.0, past_eos)
    for row in range(3):
        length = int(mask[row].sum())
        alone = windowed_returns(terms[row : row + 1, :length], mask[row : row + 1, :length], 5, 1.0, past_eos)
        assert torch.allclose(together[row, :length], alone[0])
        assert together[row, length:].eq(0).all()


def test_after_eos_term_is_the_baseline_share():
    assert after_eos_term(-60.0, 5) == 10.0
    assert after_eos_term(0.0, 5) == 0.0  # GOLD-s: slots past EOS add nothing


def test_delta_returns_are_one_on_real_tokens():
    mask = torch.tensor([[True, True, False]])
    assert delta_returns(mask).tolist() == [[1.0, 1.0, 0.0]]


def test_unit_weights_give_token_averaged_cross_entropy():
    torch.manual_seed(1)
    logits = torch.randn(2, 4, 7)
    labels = torch.tensor([[1, 2, 3, -100], [4, 5, -100, -100]])
    ones = torch.ones(2, 4)
    parts = weighted_nll(torch.log_softmax(logits, -1), labels, ones, ones)
    expected = torch.nn.functional.cross_entropy(logits.reshape(-1, 7), labels.reshape(-1), ignore_index=-100)
    assert torch.allclose(parts.loss_sum / parts.num_tokens, expected)
    assert torch.allclose(parts.nll_sum / parts.num_tokens, expected)
    assert parts.num_tokens.item() == 5


def test_unit_weights_with_smoothing_match_label_smoothed_cross_entropy():
    torch.manual_seed(2)
    logits = torch.randn(2, 3, 5)
    labels = torch.tensor([[0, 1, 2], [3, -100, -100]])
    ones = torch.ones(2, 3)
    parts = weighted_nll(torch.log_softmax(logits, -1), labels, ones, ones, label_smoothing=0.1)
    expected = torch.nn.functional.cross_entropy(logits.reshape(-1, 5), labels.reshape(-1), ignore_index=-100, label_smoothing=0.1)
    assert torch.allclose(parts.loss_sum / parts.num_tokens, expected)


def test_gradient_is_weighted_score_function():
    torch.manual_seed(3)
    logits = torch.randn(2, 3, 4, requires_grad=True)
    labels = torch.tensor([[0, 3, 1], [2, 2, -100]])
    weights = torch.tensor([[0.5, 1.0, 0.2], [0.9, 0.3, 7.0]])
    returns = torch.tensor([[2.0, 1.0, 3.0], [0.5, 4.0, 9.0]])
    parts = weighted_nll(torch.log_softmax(logits, -1), labels, weights, returns)
    (parts.loss_sum / parts.num_tokens).backward()
    # By hand: d(-log softmax(z)_y)/dz = softmax(z) - onehot(y), scaled by w Q / N on real tokens.
    probs = torch.softmax(logits.detach(), -1)
    onehot = torch.nn.functional.one_hot(labels.clamp_min(0), 4).float()
    mask = labels.ne(-100).float().unsqueeze(-1)
    expected = (weights * returns).unsqueeze(-1) * (probs - onehot) * mask / 5
    assert torch.allclose(logits.grad, expected, atol=1e-6)


def test_padding_contributes_nothing():
    torch.manual_seed(4)
    logits = torch.randn(1, 4, 6, requires_grad=True)
    labels = torch.tensor([[1, 2, -100, -100]])
    big = torch.full((1, 4), 1e6)
    parts = weighted_nll(torch.log_softmax(logits, -1), labels, big, big, label_smoothing=0.1)
    parts.loss_sum.backward()
    assert torch.count_nonzero(logits.grad[0, 2:]) == 0


def test_no_gradient_flows_into_weights_or_returns():
    logits = torch.randn(1, 2, 3, requires_grad=True)
    weights = torch.rand(1, 2, requires_grad=True)
    returns = torch.rand(1, 2, requires_grad=True)
    parts = weighted_nll(torch.log_softmax(logits, -1), torch.tensor([[0, 1]]), weights, returns)
    parts.loss_sum.backward()
    assert weights.grad is None and returns.grad is None
    assert logits.grad is not None


def test_unknown_reward_kind():
    with pytest.raises(ValueError, match="kinds 'p' and 's'"):
        per_token_rewards(torch.ones(1, 1), "delta", 0.0, 0.0, 5)
