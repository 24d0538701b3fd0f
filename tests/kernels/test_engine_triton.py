"""Engine level: a tiny random-weight Llama (one sliding-window layer, one global) gives the same
greedy tokens with the Triton backend (interpreted on CPU, compiled on CUDA) as with the torch
reference backend, through continuous batching, chunked prefill and prefix reuse."""
from __future__ import annotations

import pytest

pytest.importorskip("triton")

from tests.engine.tiny_model import greedy_tokens, tiny_engine


def test_triton_backend_matches_torch_reference_greedy(device):
    reference = tiny_engine(device, attention_backend="torch")
    triton_engine = tiny_engine(device, attention_backend="triton")
    assert triton_engine.runner.backend.name == "triton" and reference.runner.backend.name == "torch"
    got = greedy_tokens(triton_engine)
    assert got == greedy_tokens(reference)
    assert all(len(ids) == 12 for ids in got)
    assert triton_engine.stats()["prefix_hit_rate"] > 0
    triton_engine.check_integrity()
