"""The search steps of models/recurrent_search.py: the sampled search's draw (the tokens torch.multinomial
draws from the same generator state, and the generator left in the same state, on distributions as the
search makes them) and beam search's choice of each input's next beams, by known answers. The searches
whole are held to exhaustive search and to one input at a time in tests/test_recurrent_models.py."""

from __future__ import annotations

import re

import pytest
import torch

from gold_textgen.models.recurrent_search import expansions, multinomial_draw


def top_k_distributions(rows: int, size: int, k: int, generator: torch.Generator) -> torch.Tensor:
    logits = torch.randn(rows, size, generator=generator) * 3
    kept = logits.topk(k, dim=-1).indices
    masked = torch.full_like(logits, float("-inf")).scatter_(1, kept, logits.gather(1, kept))
    return torch.softmax(masked, dim=-1)


def draws_and_state(draw, probs: torch.Tensor, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(seed)
    tokens = torch.stack([draw(probs) for _ in range(5)])
    return tokens, torch.get_rng_state()


@pytest.mark.parametrize("k", [1, 5, 20, 10_100])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_the_draw_equals_multinomials_tokens_and_generator_state(k, dtype):
    probs = top_k_distributions(64, 10_100, k, torch.Generator().manual_seed(k)).to(dtype)
    for seed in range(3):
        expected, expected_state = draws_and_state(lambda p: torch.multinomial(p, 1).squeeze(1), probs, seed)
        tokens, state = draws_and_state(multinomial_draw, probs, seed)
        assert torch.equal(tokens, expected) and torch.equal(state, expected_state)


def test_equal_probabilities_and_a_single_token_are_drawn_as_multinomial_draws_them():
    probs = torch.zeros(4, 50)
    probs[0, [3, 7, 9]] = 1 / 3  # ties: multinomial's race decides among them
    probs[1, 5] = 1.0  # certain
    probs[2] = 1 / 50  # uniform over every entry
    probs[3, [0, 49]] = torch.tensor([0.25, 0.75])
    for seed in range(20):
        expected, expected_state = draws_and_state(lambda p: torch.multinomial(p, 1).squeeze(1), probs, seed)
        tokens, state = draws_and_state(multinomial_draw, probs, seed)
        assert torch.equal(tokens, expected) and torch.equal(state, expected_state)
    assert (tokens[:, 1] == 5).all() and set(tokens[:, 3].tolist()) <= {0, 49}


@pytest.mark.parametrize("bad_row", [[0.2, 0.2, float("nan"), 0.2, 0.2], [0.0] * 5, [0.5, -0.1, 0.6, 0.0, 0.0]])
def test_a_row_that_is_no_distribution_fails_as_multinomial_fails(bad_row):
    probs = torch.tensor([[0.2] * 5, bad_row])
    with pytest.raises(RuntimeError) as expected:
        torch.multinomial(probs, 1)
    with pytest.raises(RuntimeError, match=re.escape(str(expected.value).splitlines()[0])):
        multinomial_draw(probs)


def test_each_input_keeps_its_best_expansions_that_do_not_end_and_finishes_the_best_ranked_ones_that_do():
    """Three beams over a vocabulary of 10 (EOS 2, padding 1), the six best expansions of three inputs:
    input 0 ends one hypothesis at rank 1 (within the first three: it finishes) and one at rank 4 (not);
    input 1 has two finite expansions left; input 2 is done and expands nothing."""
    eos, pad, vocabulary, beams, inf = 2, 1, 10, 3, float("inf")
    top_scores = torch.tensor(
        [[-1.0, -1.5, -2.0, -2.5, -3.0, -3.5], [-0.5, -0.7, -inf, -inf, -inf, -inf], [-0.1, -0.2, -0.3, -0.4, -0.5, -0.6]]
    )
    top_ids = torch.tensor([[4, 12, 25, 7, 22, 9], [13, 2, 0, 0, 0, 0], [3, 4, 5, 6, 7, 8]])  # beam = id // 10, token = id % 10
    scores, tokens, rows, ending = expansions(top_scores, top_ids, vocabulary, beams, eos, pad, done=[False, False, True])
    assert scores.tolist() == [[-1.0, -2.0, -2.5], [-0.5, 0.0, 0.0], [0.0, 0.0, 0.0]]
    assert tokens.tolist() == [[4, 5, 7], [3, pad, pad], [pad, pad, pad]]
    assert rows.tolist() == [[0, 2, 0], [4, 3, 3], [6, 6, 6]]  # input i's beam b is row 3 i + b; an empty slot: row 3 i
    assert ending.nonzero().tolist() == [[0, 1], [1, 1]]
