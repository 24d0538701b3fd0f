"""Continuous batching on the real model: greedy tokens do not depend on the prefix cache, on batching
with other requests, on chunked prefill or on preemption; the cache is reused within a tenant and
never across tenants; priorities order admission; the block accounting holds after every run.
"""
from __future__ import annotations

import pytest

from engine.sampling_params import SamplingParams
from engine.sequence import Sequence
from tests.engine.conftest import engine_for

pytestmark = pytest.mark.slow
SYSTEM = ("You are a careful assistant for a bookshop. Answer briefly, cite the order number, and never "
          "promise refunds you cannot give. ") * 3
QUESTIONS = ["Where is my order #4411?", "Can I return a book?", "Do you ship to Norway?", "What is 2+2?",
             "Recommend a novel.", "Is the shop open on Sunday?", "How do gift cards work?", "Hello!"]


def chat(tokenizer, question: str, system: str = SYSTEM) -> list[int]:
    return tokenizer.apply_chat_template([{"role": "system", "content": system},
                                          {"role": "user", "content": question}])


def greedy(n: int) -> SamplingParams:
    return SamplingParams(max_tokens=n, temperature=0, ignore_eos=True)


@pytest.fixture(scope="module")
def cold(checkpoint):
    """The reference: no prefix cache, one request at a time."""
    return engine_for(checkpoint, enable_prefix_caching=False)


def alone(engine, prompts, params):
    return [engine.generate(p, sp).token_ids for p, sp in zip(prompts, params)]


def test_prefix_cache_reuses_the_shared_system_prompt_and_keeps_greedy_tokens(checkpoint, cold, tokenizer):
    warm = engine_for(checkpoint)
    a, b = chat(tokenizer, QUESTIONS[0]), chat(tokenizer, QUESTIONS[1])
    first, second = warm.generate(a, greedy(8)), warm.generate(b, greedy(8))
    assert first.metrics.cached_tokens == 0
    shared = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
    assert second.metrics.cached_tokens == shared // 16 * 16 > 0
    assert [first.token_ids, second.token_ids] == alone(cold, [a, b], [greedy(8)] * 2)
    again = warm.generate(a, greedy(8))                       # the whole prompt but its last token
    assert again.metrics.cached_tokens == (len(a) - 1) // 16 * 16 and again.token_ids == first.token_ids
    assert warm.stats()["prefix_hit_rate"] > 0.5
    warm.check_integrity()


def plain(tokenizer, i: int) -> list[int]:
    """Prompt i of a mixed bag: 4 to ~60 tokens, some sharing a 32-token head."""
    head = SYSTEM[:150] if i % 2 else ""
    return tokenizer.encode(head + QUESTIONS[i % 8] * (1 + i % 3))


def test_batch_of_16_mixed_lengths_equals_each_alone_without_cache(checkpoint, cold, tokenizer):
    prompts = [plain(tokenizer, i) for i in range(16)]
    params = [greedy(3 + i % 7) for i in range(16)]
    want = alone(cold, prompts, params)
    batched = engine_for(checkpoint, max_num_batched_tokens=64)          # prompts arrive in chunks
    outs = batched.generate_many(prompts, params)
    assert [o.token_ids for o in outs] == want
    assert batched.counters.steps < sum(len(w) for w in want)            # they really ran together
    assert batched.check_integrity().in_use == 0


def test_preempted_requests_recompute_to_the_same_tokens(checkpoint, cold, tokenizer):
    prompts = [plain(tokenizer, i) for i in range(4)]                 # 2 to 4 blocks each
    params = [greedy(40)] * 4                                         # +3 blocks each while decoding
    want = alone(cold, prompts, params)
    for caching in (True, False):
        tight = engine_for(checkpoint, num_kv_blocks=12, enable_prefix_caching=caching)
        outs = tight.generate_many(prompts, params)
        assert tight.stats()["preemptions"] > 0
        assert [o.token_ids for o in outs] == want
        assert tight.check_integrity().in_use == 0


def test_same_prompt_from_two_tenants_reuses_nothing_across_them(checkpoint, tokenizer):
    ids = chat(tokenizer, QUESTIONS[2])
    isolated = engine_for(checkpoint)
    isolated.generate_many([ids], greedy(2), tenant="acme")
    other = isolated.generate_many([ids], greedy(2), tenant="globex")[0]
    same = isolated.generate_many([ids], greedy(2), tenant="acme")[0]
    assert other.metrics.cached_tokens == 0 and same.metrics.cached_tokens > 0
    shared = engine_for(checkpoint, share_prefix_across_tenants=True)
    shared.generate_many([ids], greedy(2), tenant="acme")
    assert shared.generate_many([ids], greedy(2), tenant="globex")[0].metrics.cached_tokens > 0


def test_long_prompt_is_chunked_while_running_requests_keep_decoding(checkpoint, tokenizer):
    engine = engine_for(checkpoint, max_num_batched_tokens=32)
    short = Sequence(chat(tokenizer, "Hi", system="Be brief."), greedy(40))
    engine.add_request(short)
    while not short.output_token_ids:
        engine.step()
    long = Sequence(chat(tokenizer, QUESTIONS[0]), greedy(2))
    engine.add_request(long)
    steps_until_long_starts = 0
    while not long.output_token_ids:
        outs = engine.step()
        steps_until_long_starts += 1
        assert short.seq_id in [o.seq_id for o in outs]          # the decode never waited
    assert steps_until_long_starts >= long.num_prompt_tokens // 32


def test_higher_priority_preempts_lower_and_both_keep_their_tokens(checkpoint, cold, tokenizer):
    low_ids, high_ids = chat(tokenizer, QUESTIONS[3]), chat(tokenizer, QUESTIONS[4])
    want_low, want_high = alone(cold, [low_ids, high_ids], [greedy(12), greedy(6)])
    engine = engine_for(checkpoint, max_num_seqs=1, max_num_batched_tokens=256)
    low, high = Sequence(low_ids, greedy(12), priority=0), Sequence(high_ids, greedy(6), priority=5)
    engine.add_request(low)
    for _ in range(3):
        engine.step()
    engine.add_request(high)
    finished = []
    while engine.has_unfinished():
        finished += [o.seq_id for o in engine.step() if o.finished]
    assert finished == [high.seq_id, low.seq_id] and low.num_preemptions == 1
    assert (low.output_token_ids, high.output_token_ids) == (want_low, want_high)


def test_queued_requests_are_admitted_by_priority_then_arrival(checkpoint, tokenizer):
    engine = engine_for(checkpoint, max_num_seqs=1)
    seqs = [Sequence(chat(tokenizer, "Hi", system="x"), greedy(1), priority=p) for p in (0, 1, 0, 1)]
    for seq in seqs:
        engine.add_request(seq)
    order = []
    while engine.has_unfinished():
        order += [o.seq_id for o in engine.step() if o.finished]
    assert order == [seqs[1].seq_id, seqs[3].seq_id, seqs[0].seq_id, seqs[2].seq_id]


def test_integrity_check_catches_a_leaked_block(checkpoint, tokenizer):
    engine = engine_for(checkpoint)
    engine.generate(chat(tokenizer, "Hi"), greedy(2))
    engine.check_integrity()
    engine.blocks.allocator.allocate(1)                          # nobody will ever release it
    with pytest.raises(AssertionError):
        engine.check_integrity()


def test_requests_arriving_together_compute_a_shared_prefix_once(checkpoint, cold, tokenizer):
    prompts = [chat(tokenizer, q) for q in QUESTIONS[:4]]
    engine = engine_for(checkpoint)
    outs = engine.generate_many(prompts, greedy(4))
    shared = next(i for i, (x, y) in enumerate(zip(prompts[0], prompts[1])) if x != y) // 16 * 16
    assert [o.metrics.cached_tokens for o in outs] == [0] + [shared] * 3      # the later three waited for it
    assert [o.token_ids for o in outs] == alone(cold, prompts, [greedy(4)] * 4)
