"""The CUDA-graph decode path's bookkeeping, on CPU: decode steps through static buffers padded to
batch-size buckets (the padding rows in the pool's spare block), replayed by rerunning the forward pass
instead of a captured graph, give the eager tokens; the spare block is never handed to a request.
(The capture itself runs in tests/kernels/test_cuda_graphs.py, on CUDA machines only.)"""
from __future__ import annotations

import pytest

from engine.cuda_graphs import DecodeGraphs
from engine.sampling_params import SamplingParams
from tests.engine.tiny_model import prompts, tiny_engine


def shrinking_batch(engine) -> list[list[int]]:
    """Five requests that finish one after another: decode batches of 5, 4, 3, 2 and 1."""
    params = [SamplingParams(max_tokens=n, temperature=0, ignore_eos=True) for n in (3, 5, 7, 9, 11)]
    return [o.token_ids for o in engine.generate_many(prompts(), params)]


def test_padded_static_buffers_give_the_eager_tokens():
    engine = tiny_engine(max_num_seqs=6, max_num_batched_tokens=256)    # every prompt in the first step
    runner = engine.runner
    if not runner.backend.graph_safe:
        pytest.skip("the C attention kernel is not built here")
    runner.graphs = DecodeGraphs(runner.model, runner.pool, runner.backend, 6, 256, cuda=False)
    assert runner.graphs.buckets == [1, 2, 4, 6] and runner.graphs.bucket(3) == 4 and runner.graphs.bucket(7) is None
    assert shrinking_batch(engine) == shrinking_batch(tiny_engine(max_num_seqs=6, max_num_batched_tokens=256))
    assert set(runner.graphs.replays) == {6, 4, 2, 1}          # batches 5, 4, 3 (padded), 2, 1
    assert runner.pool.spare_block == runner.num_blocks
    engine.check_integrity()
