"""CUDA graphs of the decode step (EngineConfig.cuda_graphs) give the eager tokens: a tiny random Llama
with a sliding-window layer, decode batches that shrink through padded buckets, prefix reuse. Runs only
where CUDA is (compiled Triton kernels); the buffers and padding are tested on CPU in
tests/engine/test_decode_graphs.py."""
from __future__ import annotations

import os

import pytest
import torch

pytest.importorskip("triton")
pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or os.environ.get("TRITON_INTERPRET") == "1",
                                reason="CUDA graphs need a CUDA device and compiled kernels")

from tests.engine.test_decode_graphs import shrinking_batch
from tests.engine.tiny_model import greedy_tokens, tiny_engine


def test_graph_replays_give_the_eager_tokens():
    options = {"max_num_seqs": 6, "max_num_batched_tokens": 256}
    eager = tiny_engine("cuda", **options)
    graphed = tiny_engine("cuda", cuda_graphs=True, **options)
    assert graphed.runner.graphs is not None and eager.runner.graphs is None
    assert shrinking_batch(graphed) == shrinking_batch(eager)
    assert greedy_tokens(graphed) == greedy_tokens(eager)
    assert {6, 4, 2, 1} <= set(graphed.runner.graphs.replays)
    graphed.check_integrity()
