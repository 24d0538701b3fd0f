"""The engine against transformers on the same GGUF: weights after un-permutation, prefill logits,
and greedy token ids over varied prompts (chat, plain completion, code, multi-turn, digits/unicode).
"""
from __future__ import annotations

import pytest
import torch

from engine.sampling_params import SamplingParams
from tests.engine.conftest import engine_for

pytestmark = pytest.mark.slow
NEW_TOKENS = 32

CHATS = {
    "chat": [{"role": "user", "content": "Explain why the sky is blue."}],
    "code": [{"role": "user", "content": "Write a Python function that checks whether a number is prime."}],
    "multi_turn": [
        {"role": "system", "content": "You are a travel agent."},
        {"role": "user", "content": "I want to visit Japan."},
        {"role": "assistant", "content": "Great choice! When would you like to go?"},
        {"role": "user", "content": "In April, for the cherry blossoms. What should I see?"},
    ],
    "digits_unicode": [
        {"role": "user", "content": "Combien font 127 + 389 ? Réponds en français, s'il te plaît. 🙂"},
    ],
    "short_answer": [{"role": "user", "content": "What is the capital of France?"}],
}
PLAIN = {
    "plain_completion": "Once upon a time, in a small village by the sea,",
    "code_completion": "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
}


def prompt_ids(tokenizer, name):
    return tokenizer.apply_chat_template(CHATS[name]) if name in CHATS else tokenizer.encode(PLAIN[name])


def hf_greedy(hf_model, ids):
    with torch.no_grad():
        x = torch.tensor([ids])
        out = hf_model.generate(input_ids=x, attention_mask=torch.ones_like(x), max_new_tokens=NEW_TOKENS,
                                do_sample=False)
    return out[0, len(ids):].tolist()


def test_unpermuted_q_k_weights_equal_transformers(checkpoint, hf_model):
    for i in (0, 17, 29):
        attn = hf_model.model.layers[i].self_attn
        assert torch.equal(checkpoint.weights[f"layers.{i}.attn.q_proj.weight"], attn.q_proj.weight)
        assert torch.equal(checkpoint.weights[f"layers.{i}.attn.k_proj.weight"], attn.k_proj.weight)


def test_prefill_logits_match_transformers_at_every_position(llm, hf_model, tokenizer):
    ids = prompt_ids(tokenizer, "multi_turn")
    ours = llm.logits_at_every_position(ids)                                    # [T, V]
    with torch.no_grad():
        theirs = hf_model(torch.tensor([ids])).logits[0]
    assert (ours - theirs).abs().max() < 1e-3


@pytest.mark.parametrize("name", [*CHATS, *PLAIN])
def test_greedy_ids_match_transformers(llm, hf_model, tokenizer, name):
    ids = prompt_ids(tokenizer, name)
    ours = llm.generate(ids, SamplingParams(max_tokens=NEW_TOKENS, temperature=0))
    theirs = hf_greedy(hf_model, ids)
    assert ours.token_ids == theirs
    assert ours.finish_reason == ("stop" if theirs[-1] == 2 else "length")


def test_capital_of_france(llm, tokenizer):
    ids = prompt_ids(tokenizer, "short_answer")
    out = llm.generate(ids, SamplingParams(max_tokens=NEW_TOKENS, temperature=0))
    assert out.text == "The capital of France is Paris."
    assert out.finish_reason == "stop" and out.token_ids[-1] == 2


def test_prefill_in_chunks_equals_prefill_at_once(checkpoint, tokenizer):
    """A small token budget cuts the prompt into chunks; each later chunk attends to the cached positions
    plus its own causal block, and the greedy tokens do not change."""
    ids = prompt_ids(tokenizer, "multi_turn")
    params = SamplingParams(max_tokens=12, temperature=0)
    whole = engine_for(checkpoint).generate(ids, params)
    chunked = engine_for(checkpoint, max_num_batched_tokens=20, max_num_seqs=4)
    out = chunked.generate(ids, params)
    assert out.token_ids == whole.token_ids
    assert chunked.counters.steps == -(-len(ids) // 20) + len(out.token_ids) - 1   # chunks, then decodes
