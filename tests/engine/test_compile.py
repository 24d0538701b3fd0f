"""Compiled decoder layers (EngineConfig.compile) compute what eager ones do: the same greedy tokens in
float32 through prefill chunks, decode batches of every size and prefix reuse; in bfloat16 (packed
linears as custom ops) logits as close to float32's as eager bf16's are; and a few graphs for all of it
(one token or many, per layer kind), never one per step."""
from __future__ import annotations

import torch

from tests.engine.tiny_model import greedy_tokens, prompts, tiny_engine


def graphs() -> int:
    return torch._dynamo.utils.counters["stats"]["unique_graphs"]


def test_compiled_layers_give_the_eager_tokens_with_a_few_graphs():
    before = graphs()
    compiled = tiny_engine(compile=True)
    assert greedy_tokens(compiled) == greedy_tokens(tiny_engine())
    assert graphs() - before <= 4                     # {one token, many} x {sliding, global layer}
    compiled.check_integrity()


def test_compiled_bf16_logits_are_as_close_to_float32_as_eager_ones():
    ids = prompts()[1]
    exact = tiny_engine().logits_at_every_position(ids)
    eager = tiny_engine(dtype="bfloat16").logits_at_every_position(ids)
    compiled = tiny_engine(dtype="bfloat16", compile=True).logits_at_every_position(ids)
    assert (compiled - exact).abs().mean() <= 1.25 * (eager - exact).abs().mean()
    assert torch.equal(compiled.argmax(-1), exact.argmax(-1))
