"""The objectives after GOLD, each checked against a separate loop over its published formula, and the
relations that place them beside GOLD."""

import math

import torch

from gold_textgen.objectives.gold import delta_returns, importance_weights
from gold_textgen.objectives.loss_truncation import LossTruncation, sequence_losses
from gold_textgen.objectives.token_weighting import dft_weights, mixce_weights, tailr_weights
from gold_textgen.objectives.weighted_nll import reference_logprobs, weighted_nll

torch.manual_seed(0)
LOGITS = torch.randn(2, 4, 6)
LABELS = torch.tensor([[1, 4, 2, -100], [0, 5, 5, 3]])
LOGPROBS = torch.log_softmax(LOGITS, -1)
MASK = LABELS.ne(-100)
TOKENS = int(MASK.sum())


def loop_loss(weight_of) -> float:
    """-(1/N) sum over real tokens of weight(p_t) * log p_t, token by token from the softmax."""
    total = 0.0
    for b in range(LABELS.shape[0]):
        for t in range(LABELS.shape[1]):
            label = int(LABELS[b, t])
            if label < 0:
                continue
            probs = [math.exp(v) / sum(math.exp(u) for u in LOGITS[b, t].tolist()) for v in LOGITS[b, t].tolist()]
            total -= weight_of(probs[label]) * math.log(probs[label])
    return total / TOKENS


def loss_with(weights: torch.Tensor) -> float:
    parts = weighted_nll(LOGPROBS, LABELS, weights, delta_returns(MASK))
    return float(parts.loss_sum / parts.num_tokens)


def own_logprobs() -> torch.Tensor:
    return reference_logprobs(LOGPROBS, LABELS)


def test_dft_weights_each_token_by_its_own_probability():
    assert math.isclose(loss_with(dft_weights(own_logprobs())), loop_loss(lambda p: p), rel_tol=1e-5)


def test_dft_is_gold_delta_without_lag_and_without_floor():
    """GOLD-delta with u = 0 and pi_tilde = the current policy (k = 1) gives DFT's loss on the same batch."""
    gold_delta = importance_weights(own_logprobs(), min_weight=0.0)
    assert torch.equal(gold_delta[MASK], dft_weights(own_logprobs())[MASK])
    assert math.isclose(loss_with(gold_delta), loss_with(dft_weights(own_logprobs())), rel_tol=1e-7)


def test_tailr_weight_is_the_clamped_density_ratio():
    gamma, floor = 0.3, 0.2
    expected = loop_loss(lambda p: min(1.0, max(floor, p / (gamma + (1 - gamma) * p))))
    assert math.isclose(loss_with(tailr_weights(own_logprobs(), gamma, floor)), expected, rel_tol=1e-5)


def test_tailr_spans_mle_to_dft():
    logprobs = own_logprobs()
    assert torch.allclose(tailr_weights(logprobs, 1.0, 0.0)[MASK], dft_weights(logprobs)[MASK], atol=1e-6)
    assert torch.allclose(tailr_weights(logprobs, 1e-9, 0.0)[MASK], torch.ones(TOKENS), atol=1e-5)


def test_mixce_mixes_mle_with_self_weighting():
    eta = 0.25
    expected = loop_loss(lambda p: eta + (1 - eta) * p)
    assert math.isclose(loss_with(mixce_weights(own_logprobs(), eta)), expected, rel_tol=1e-5)


def test_the_weights_carry_no_gradient():
    logits = LOGITS.clone().requires_grad_(True)
    logprobs = torch.log_softmax(logits, -1)
    own = reference_logprobs(logprobs, LABELS)
    for weights in (dft_weights(own), tailr_weights(own, 0.5, 0.1), mixce_weights(own, 0.5)):
        assert not weights.requires_grad


def test_loss_truncation_drops_exactly_the_configured_share_once_warmed_up():
    truncation = LossTruncation(drop_fraction=0.4, warmup=100, window=100)
    losses = torch.arange(1, 101, dtype=torch.float32)
    assert truncation.keep(losses).sum() == 100  # warming up: the cut-off is computed once the window has passed
    kept = truncation.keep(losses[torch.randperm(100)])
    assert int(kept.sum()) == 60  # the 60th percentile of 1..100 is 60.4: losses 61..100 are dropped
    assert truncation.cutoff == float(torch.quantile(losses, 0.6))


def test_loss_truncation_keeps_everything_before_the_warm_up_ends():
    truncation = LossTruncation(drop_fraction=0.5, warmup=300, window=100)
    for _ in range(2):
        assert truncation.keep(torch.arange(100, dtype=torch.float32)).sum() == 100
    assert truncation.keep(torch.arange(100, dtype=torch.float32)).sum() == 50


def test_loss_truncation_resumes_from_its_state():
    stream = [torch.rand(30) for _ in range(12)]
    whole = LossTruncation(0.3, 60, 50)
    first = LossTruncation(0.3, 60, 50)
    for batch in stream[:5]:
        first.keep(batch)
    second = LossTruncation(0.3, 60, 50)
    second.load_state_dict(first.state_dict())
    kept = [whole.keep(batch) for batch in stream]
    assert all(torch.equal(second.keep(batch), kept[5 + i]) for i, batch in enumerate(stream[5:]))


def test_sequence_losses_are_token_means_over_real_tokens():
    nll = -own_logprobs()
    expected = torch.tensor([float(nll[0, :3].mean()), float(nll[1].mean())])
    assert torch.allclose(sequence_losses(nll, MASK), expected)
