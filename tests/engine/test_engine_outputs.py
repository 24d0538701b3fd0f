"""What one request gets back from the real model: finish reasons, usage, stop strings across token
boundaries, EOS handling, seeded sampling, streamed text, and validation before any work.
"""
from __future__ import annotations

import pytest

from engine.errors import ContextLengthError, EmptyPromptError, InvalidTokenError
from engine.sampling_params import SamplingParams
from engine.sequence import Sequence

pytestmark = pytest.mark.slow
FRANCE = [{"role": "user", "content": "What is the capital of France?"}]  # "The capital of France is Paris."
STORY = [{"role": "user", "content": "Tell me a story about a dragon."}]


@pytest.fixture(scope="module")
def france(tokenizer):
    return tokenizer.apply_chat_template(FRANCE)


def streamed(llm, ids, params):
    seq = Sequence(ids, params)
    outs = list(llm.stream(seq))
    return outs, seq


def test_max_tokens_finishes_with_length(llm, tokenizer):
    ids = tokenizer.apply_chat_template(STORY)
    out = llm.generate(ids, SamplingParams(max_tokens=7, temperature=0))
    assert out.finish_reason == "length" and len(out.token_ids) == 7
    assert (out.prompt_tokens, out.completion_tokens) == (len(ids), 7)


def test_eos_finishes_with_stop_and_is_not_in_the_text(llm, france):
    out = llm.generate(france, SamplingParams(max_tokens=30, temperature=0))
    assert out.finish_reason == "stop" and out.token_ids[-1] == 2
    assert out.text == "The capital of France is Paris." and out.completion_tokens == len(out.token_ids) == 8


def test_ignore_eos_runs_to_max_tokens(llm, france):
    out = llm.generate(france, SamplingParams(max_tokens=12, temperature=0, ignore_eos=True))
    assert out.finish_reason == "length" and len(out.token_ids) == 12 and 2 in out.token_ids


def test_stop_string_across_tokens_is_never_streamed(llm, france, tokenizer):
    outs, seq = streamed(llm, france, SamplingParams(max_tokens=30, temperature=0, stop=["is Par"]))
    pieces = [o.text for o in outs]
    assert "".join(pieces) == "The capital of France "
    assert outs[-1].finish_reason == "stop" and outs[-1].token_ids != [2]
    assert tokenizer.decode(seq.output_token_ids[-2:]) == " is Paris"     # the stop spans two tokens
    assert all(o.finish_reason is None for o in outs[:-1])


def test_possible_stop_prefix_is_held_back_then_released(llm, france):
    outs, _ = streamed(llm, france, SamplingParams(max_tokens=30, temperature=0, stop=["Paris!"]))
    texts = [o.text for o in outs]
    assert "".join(texts) == "The capital of France is Paris."
    assert texts[-4:] == [" is", " ", "Paris.", ""]                    # "Paris" waited for "." (then EOS)


def test_streamed_text_equals_the_decoded_completion(llm, tokenizer):
    ids = tokenizer.apply_chat_template([{"role": "user", "content": "Écris un haïku sur la mer 🌊"}])
    outs, seq = streamed(llm, ids, SamplingParams(max_tokens=24, temperature=0))
    assert "".join(o.text for o in outs) == tokenizer.decode(seq.output_token_ids, skip_special_tokens=True)
    assert [o.completion_tokens for o in outs] == list(range(1, len(outs) + 1))


def test_seeded_sampling_repeats_and_seeds_differ(llm, tokenizer):
    ids = tokenizer.apply_chat_template(STORY)
    def run(seed):
        return llm.generate(ids, SamplingParams(max_tokens=16, temperature=1.0, top_p=0.95, seed=seed))
    assert run(11).token_ids == run(11).token_ids
    assert run(11).token_ids != run(12).token_ids


def test_validation_rejects_before_any_work(llm, france):
    with pytest.raises(ContextLengthError, match="8192"):
        llm.validate(france, SamplingParams(max_tokens=8192))
    with pytest.raises(EmptyPromptError):
        llm.validate([], SamplingParams())
    with pytest.raises(InvalidTokenError):
        llm.validate([5, 49152], SamplingParams())
    with pytest.raises(ValueError):                                     # all are ValueErrors for the gateway
        llm.generate([1] * 8000, SamplingParams(max_tokens=500))
    llm.validate(france, SamplingParams(max_tokens=8192 - len(france)))   # exactly full is fine
