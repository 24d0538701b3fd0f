"""Sampler: greedy, top-k, top-p, temperature, and per-request seeds."""
from __future__ import annotations

import pytest
import torch

from engine.sampler import make_generator, sample, top_k_filter, top_p_filter
from engine.sampling_params import SamplingParams


def logits_batch(n=20, vocab=500, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(vocab, generator=g) * 3 for _ in range(n)]


def test_greedy_takes_the_argmax():
    for logits in logits_batch():
        assert sample(logits, SamplingParams(temperature=0), None) == int(logits.argmax())


def test_top_k_one_equals_greedy_even_with_temperature():
    params = SamplingParams(temperature=1.5, top_k=1, seed=7)
    for logits in logits_batch():
        assert sample(logits, params, make_generator(params)) == int(logits.argmax())


def test_seeded_request_repeats_exactly():
    params = SamplingParams(temperature=1.0, top_p=0.9, top_k=50, seed=1234)
    runs = []
    for _ in range(2):
        g = make_generator(params)
        runs.append([sample(logits, params, g) for logits in logits_batch(n=50, seed=3)])
    assert runs[0] == runs[1]


def test_different_seeds_give_different_draws():
    draws = []
    for seed in (1, 2):
        params = SamplingParams(temperature=1.0, seed=seed)
        g = make_generator(params)
        draws.append([sample(logits, params, g) for logits in logits_batch(n=50, seed=3)])
    assert draws[0] != draws[1]


def test_unseeded_generators_differ():
    params = SamplingParams(temperature=1.0)
    assert make_generator(params).initial_seed() != make_generator(params).initial_seed()
    assert make_generator(SamplingParams(temperature=0)) is None


def test_top_k_keeps_exactly_k_tokens():
    logits = torch.randn(1000)
    kept = torch.isfinite(top_k_filter(logits, 17))
    assert kept.sum() == 17
    assert set(kept.nonzero().flatten().tolist()) == set(torch.topk(logits, 17).indices.tolist())
    assert torch.equal(top_k_filter(logits, 0), logits)


@pytest.mark.parametrize("p", [0.05, 0.3, 0.5, 0.9, 0.99])
def test_top_p_keeps_the_smallest_set_reaching_the_mass(p):
    logits = torch.randn(300) * 2
    probs = torch.softmax(logits, -1)
    kept = torch.isfinite(top_p_filter(logits, p))
    assert probs[kept].sum() >= p - 1e-6                               # enough mass
    smallest_kept = probs[kept].min()
    assert probs[kept].sum() - smallest_kept < p                       # minimal: drop one and it falls short
    assert (probs[~kept] <= smallest_kept).all()                       # and it is the most likely tokens


def test_top_p_always_keeps_the_top_token():
    logits = torch.tensor([10.0, 0.0, 0.0])
    assert torch.isfinite(top_p_filter(logits, 0.01)).tolist() == [True, False, False]


def test_samples_only_come_from_the_nucleus():
    logits = torch.tensor([3.0, 2.9, 0.0, -1.0, -2.0])
    params = SamplingParams(temperature=1.0, top_p=0.6, seed=0)
    g = make_generator(params)
    assert {sample(logits, params, g) for _ in range(200)} == {0, 1}


def test_low_temperature_concentrates_on_the_argmax():
    logits = torch.tensor([1.0, 1.5, 0.5])
    params = SamplingParams(temperature=0.05, seed=0)
    g = make_generator(params)
    assert {sample(logits, params, g) for _ in range(100)} == {1}
