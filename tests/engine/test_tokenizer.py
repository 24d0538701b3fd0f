"""Our GGUF-built tokenizer against transformers' on the same file: encode, chat template, decode,
special tokens, and the incremental detokenizer.
"""
from __future__ import annotations

import dataclasses
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.detokenizer import IncrementalDetokenizer
from engine.errors import ChatTemplateError

pytestmark = pytest.mark.slow

TEXTS = [
    "Hello world",
    "The year 2024 had 366 days; 12345 + 678 = 13023, pi ~ 3.14159.",
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
    "for (int i = 0; i < 10; ++i) { printf(\"%d\\n\", i); }",
    "multiple   spaces\t\ttabs\n\n\nnewlines   \n  trailing  ",
    "Ünïcödé: café, naïve, Straße, Ελληνικά, русский, 日本語のテキスト, 中文, 한국어, עברית, العربية",
    "emoji 😀👍🏽🇫🇷 and math ∑∫√∞ ≠ ≤ ± × ÷ °C",
    "I'm sure you're right, they've said it'll be what we'd do. DON'T SHOUT",
    "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
    "text with <|im_end|> inside and <repo_name> and <filename>x.py",
    "   leading spaces and URL https://example.com/a?b=1&c=2#frag",
    "",
    " ",
    "\n",
    "0000 1 22 333 4444 55555 a1b2c3 x=-0.5e-10",
    "JSON: {\"key\": [1, 2, {\"nested\": null}], \"ok\": true}",
]

CONVERSATIONS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi!"}],
    [
        {"role": "user", "content": "Name a prime."},
        {"role": "assistant", "content": "7"},
        {"role": "user", "content": "Another one, bigger than 100 😀"},
    ],
    [{"role": "user", "content": "Write Python:\n```python\nprint('x')\n```"}],
]


def has_non_ascii_numeral(text: str) -> bool:
    """½ ² ① ٣ ...: where smollm's pre-tokenizer (and llama.cpp) split, and transformers' GGUF loader,
    which ignores tokenizer.ggml.pre, does not. ASCII digits never differ: the vocab has no digit merges."""
    return any(unicodedata.category(c).startswith("N") and not c.isascii() for c in text)


@pytest.mark.parametrize("text", TEXTS)
def test_encode_matches_transformers(tokenizer, hf_tokenizer, text):
    assert tokenizer.encode(text) == hf_tokenizer(text)["input_ids"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=60).filter(lambda t: not has_non_ascii_numeral(t)))
def test_encode_matches_transformers_on_random_text(tokenizer, hf_tokenizer, text):
    assert tokenizer.encode(text) == hf_tokenizer(text)["input_ids"]


def test_every_numeral_is_its_own_pretoken_as_in_smollm(tokenizer):
    """The model's own tokenizer (and llama.cpp's `smollm` pre-type) isolate each numeral; we follow
    it. (transformers 5.24 loading this GGUF keeps " ½" as one piece, token 3351.)"""
    ours = tokenizer.encode(" ½ and ²")
    assert [tokenizer.decode([i]) for i in ours] == [" ", "½", " and", " ", "²"]


@pytest.mark.parametrize("text", TEXTS)
def test_decode_round_trips(tokenizer, text):
    assert tokenizer.decode(tokenizer.encode(text)) == text


def test_special_tokens_are_single_ids(tokenizer):
    assert tokenizer.encode("<|im_start|>assistant\n<|im_end|>") == [1, 520, 9531, 198, 2]
    assert tokenizer.bos_token == "<|im_start|>" and tokenizer.eos_token == "<|im_end|>"


@pytest.mark.parametrize("messages", CONVERSATIONS)
@pytest.mark.parametrize("add_generation_prompt", [True, False])
def test_chat_template_matches_transformers(tokenizer, hf_tokenizer, messages, add_generation_prompt):
    ours = tokenizer.apply_chat_template(messages, add_generation_prompt=add_generation_prompt)
    theirs = hf_tokenizer.apply_chat_template(messages, add_generation_prompt=add_generation_prompt,
                                              tokenize=True, return_dict=True)["input_ids"]
    assert ours == list(theirs)


def test_chat_template_adds_default_system_prompt_and_generation_prompt(tokenizer):
    text = tokenizer.render_chat([{"role": "user", "content": "hi"}])
    assert text.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")
    assert text.endswith("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")


def test_template_raise_exception_becomes_a_value_error(tokenizer):
    strict = dataclasses.replace(tokenizer, chat_template="{{ raise_exception('roles must alternate') }}")
    with pytest.raises(ChatTemplateError, match="roles must alternate"):
        strict.apply_chat_template([{"role": "user", "content": "x"}])


def test_template_sees_tools_and_special_tokens(tokenizer):
    source = "{{ bos_token }}{% for t in tools %}{{ t | tojson }}{% endfor %}{{ eos_token }}"
    custom = dataclasses.replace(tokenizer, chat_template=source)
    tools = [{"type": "function", "function": {"name": "météo"}}]
    text = custom.render_chat([], tools=tools)
    assert text == '<|im_start|>{"type": "function", "function": {"name": "météo"}}<|im_end|>'


def test_template_sandbox_blocks_attribute_escapes(tokenizer):
    escape = "{{ messages.__class__.__mro__[1].__subclasses__() }}"
    evil = dataclasses.replace(tokenizer, chat_template=escape)
    with pytest.raises(ChatTemplateError):
        evil.render_chat([])


def test_model_without_template_refuses_chat(tokenizer):
    with pytest.raises(ChatTemplateError):
        no_template = dataclasses.replace(tokenizer, chat_template=None)
        no_template.apply_chat_template([{"role": "user", "content": "x"}])


@pytest.mark.parametrize("text", [TEXTS[5], TEXTS[6], "日本語😀🇫🇷 mixed ascii ½ ①" * 3, TEXTS[2]])
def test_detokenizer_streams_whole_characters_only(tokenizer, text):
    ids = tokenizer.encode(text)
    detok = IncrementalDetokenizer(tokenizer, prompt_ids=tokenizer.encode("Say: "))
    deltas = [detok.step(i) for i in ids]
    assert "".join(deltas) + detok.flush() == text
    assert not any("\ufffd" in d for d in deltas)


def test_detokenizer_is_exercised_on_split_characters(tokenizer):
    ids = tokenizer.encode("😀🇫🇷")
    assert any("\ufffd" in tokenizer.decode([i]) for i in ids)   # some token alone is half a character


def test_detokenizer_flushes_an_incomplete_character_at_the_end(tokenizer):
    ids = tokenizer.encode("ok 😀")
    detok = IncrementalDetokenizer(tokenizer, prompt_ids=[])
    shown = "".join(detok.step(i) for i in ids[:-1])
    assert shown == "ok" or shown == "ok "
    assert (shown + detok.flush()).startswith("ok ")


def test_detokenizer_skips_special_tokens(tokenizer):
    detok = IncrementalDetokenizer(tokenizer, prompt_ids=[])
    assert [detok.step(i) for i in tokenizer.encode("hi<|im_end|>")] == ["hi", ""]
