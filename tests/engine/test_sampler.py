"""Sampler: greedy, top-k, top-p, temperature, per-request seeds, and whole batches in one pass."""
from __future__ import annotations

import pytest
import torch

from engine.sampler import make_generator, sample, sample_batch, top_k_filter, top_p_filter
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


def test_a_batch_gives_each_row_its_own_parameters():
    logits = torch.stack(logits_batch(n=5, vocab=300, seed=4))
    params = [SamplingParams(temperature=0), SamplingParams(temperature=1.3, top_k=1, seed=1),
              SamplingParams(temperature=1.0, top_p=1e-6, seed=2), SamplingParams(temperature=1e-3, seed=3),
              SamplingParams(temperature=1.0, top_k=3, seed=4)]
    for _ in range(20):
        tokens = sample_batch(logits, params, [make_generator(p) for p in params])
        assert tokens[:4] == logits[:4].argmax(-1).tolist()        # greedy, top-1, a tiny nucleus, a cold row
        assert tokens[4] in torch.topk(logits[4], 3).indices.tolist()


def test_a_seeded_row_draws_the_same_whatever_shares_its_batch():
    logits = torch.stack(logits_batch(n=4, vocab=400, seed=5))
    mine = SamplingParams(temperature=1.0, top_p=0.9, seed=77)
    alone = sample_batch(logits[:1], [mine], [make_generator(mine)])
    others = [SamplingParams(temperature=0.7, top_k=20), SamplingParams(temperature=0), SamplingParams(top_p=0.5)]
    together = sample_batch(logits, [mine, *others], [make_generator(p) for p in [mine, *others]])
    assert together[0] == alone[0]


def test_draws_follow_the_distribution():
    logits = torch.log(torch.tensor([0.5, 0.3, 0.15, 0.05]))
    params = SamplingParams(temperature=1.0, seed=11)
    g = make_generator(params)
    counts = torch.bincount(torch.tensor([sample(logits, params, g) for _ in range(4000)]), minlength=4)
    assert torch.allclose(counts / 4000, torch.tensor([0.5, 0.3, 0.15, 0.05]), atol=0.03)


def test_per_row_top_k_and_top_p_match_the_single_row_filters():
    logits = torch.stack(logits_batch(n=3, vocab=200, seed=6))
    ks, ps = torch.tensor([5, 0, 50]), torch.tensor([0.3, 1.0, 0.9])
    for row in range(3):
        assert torch.equal(top_k_filter(logits, ks)[row], top_k_filter(logits[row], int(ks[row])))
        assert torch.equal(top_p_filter(logits, ps)[row], top_p_filter(logits[row], float(ps[row])))
