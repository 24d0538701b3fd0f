"""Gemma 3: the packaged 270M GGUF (assembled from its part packages) against transformers on the same
file, config and tokenizer included; a tiny random HF folder with an 8-token sliding window, so every
layer kind and the window are exercised in prefill, chunked prefill and decode; the base model's
fallback chat template.
"""
from __future__ import annotations

import pytest
import torch

from engine.config import FULL, SLIDING
from engine.loader import load_checkpoint, resolve_model_path
from engine.sampling_params import SamplingParams
from tests.engine.conftest import engine_for

pytestmark = pytest.mark.slow
TEXTS = ["The capital of France is", "def fibonacci(n):\n", "Once upon a time, in a small village by the sea,",
         "Question: Why is the sky blue?\nAnswer:", "Émile a 12345 €  deux  espaces\n\n日本語 😀"]


@pytest.fixture(scope="module")
def gemma():
    return load_checkpoint("gemma3-270m")


@pytest.fixture(scope="module")
def hf_gemma():
    from transformers import AutoModelForCausalLM, AutoTokenizer
    path = resolve_model_path("gemma3-270m")
    model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32).eval()
    return model, AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)


def hf_greedy(model, ids: list[int], n: int) -> list[int]:
    x = torch.tensor([ids])
    with torch.no_grad():
        out = model.generate(input_ids=x, attention_mask=torch.ones_like(x), max_new_tokens=n, min_new_tokens=n,
                             do_sample=False)
    return out[0, len(ids):].tolist()


def test_packaged_gemma_resolves_to_the_assembled_file():
    path = resolve_model_path("packaged:gemma3-270m")
    assert path.name == "gemma-3-270m-q4_k_m.gguf" and path.stat().st_size > 200_000_000
    assert resolve_model_path("gemma3-270m") == path


def test_gguf_config_has_the_gemma3_layer_pattern(gemma):
    cfg = gemma.config
    assert (cfg.architecture, cfg.num_layers, cfg.num_kv_heads, cfg.head_dim) == ("gemma3", 18, 1, 256)
    assert cfg.layer_types == ([SLIDING] * 5 + [FULL]) * 3 and cfg.sliding_window == 512
    assert (cfg.rope_theta, cfg.rope_local_theta, cfg.query_pre_attn_scalar) == (1e6, 1e4, 256)
    assert cfg.eos_token_ids == [1, 106]                                  # <eos>, <end_of_turn>
    assert abs(float(gemma.weights["layers.0.attn_norm.weight"].mean())) < 20    # stored 1 + w, kept as w


def test_tokenizer_matches_transformers(gemma, hf_gemma):
    _, hf_tok = hf_gemma
    for text in TEXTS:
        ids = gemma.tokenizer.encode(text)
        assert ids == hf_tok(text)["input_ids"]
        assert gemma.tokenizer.decode(ids, skip_special_tokens=True) == text


def test_greedy_tokens_and_logits_match_transformers(gemma, hf_gemma):
    model, _ = hf_gemma
    engine = engine_for(gemma, num_kv_blocks=64)
    for text in TEXTS[:4]:
        ids = gemma.tokenizer.encode(text)
        ours = engine.generate(ids, SamplingParams(max_tokens=24, temperature=0, ignore_eos=True)).token_ids
        assert ours == hf_greedy(model, ids, 24), text
    ids = gemma.tokenizer.encode(TEXTS[2])
    with torch.no_grad():
        theirs = model(torch.tensor([ids])).logits[0]
    assert (engine.logits_at_every_position(ids) - theirs).abs().max() < 1e-3


def test_base_model_gets_a_question_answer_template_that_stops(gemma):
    tok = gemma.tokenizer
    assert tok.has_fallback_template and tok.chat_stop == ["\nQuestion:"]
    messages = [{"role": "system", "content": "Be brief."},
                {"role": "user", "content": "What is the capital of France?"}]
    assert tok.decode(tok.apply_chat_template(messages)) == \
        "<bos>Be brief.\n\nQuestion: What is the capital of France?\nAnswer:"
    engine = engine_for(gemma, num_kv_blocks=64)
    out = engine.generate(tok.apply_chat_template(messages), SamplingParams(max_tokens=40, temperature=0,
                                                                            stop=tok.chat_stop))
    assert "Paris" in out.text and out.finish_reason == "stop"


@pytest.fixture(scope="module")
def tiny_gemma(tmp_path_factory, hf_tokenizer):
    import transformers
    torch.manual_seed(0)
    config = transformers.Gemma3TextConfig(
        vocab_size=49152, hidden_size=64, intermediate_size=128, num_hidden_layers=4, num_attention_heads=4,
        num_key_value_heads=2, head_dim=32, max_position_embeddings=512, sliding_window=8,
        layer_types=[SLIDING, FULL, SLIDING, SLIDING], query_pre_attn_scalar=24, initializer_range=0.5,
        bos_token_id=1, eos_token_id=2, pad_token_id=0)
    model = transformers.Gemma3ForCausalLM(config).eval()
    with torch.no_grad():                         # HF starts norms at 0; random ones make (1 + w) matter
        for name, p in model.named_parameters():
            if "norm" in name:
                p.normal_(0, 0.3)
    folder = tmp_path_factory.mktemp("tiny-gemma3")
    model.save_pretrained(folder)
    hf_tokenizer.save_pretrained(folder)
    return folder, model


def test_tiny_gemma_folder_matches_transformers_across_the_window(tiny_gemma):
    folder, model = tiny_gemma
    checkpoint = load_checkpoint(folder)
    assert checkpoint.config.layer_types == [SLIDING, FULL, SLIDING, SLIDING]
    ids = torch.randint(3, 49152, (30,), generator=torch.Generator().manual_seed(3)).tolist()
    engine = engine_for(checkpoint, block_size=4, num_kv_blocks=64, max_num_batched_tokens=7)   # chunked
    with torch.no_grad():
        theirs = model(torch.tensor([ids])).logits[0]
    assert (engine.logits_at_every_position(ids) - theirs).abs().max() < 1e-4
    ours = engine.generate(ids, SamplingParams(max_tokens=16, temperature=0, ignore_eos=True)).token_ids
    assert ours == hf_greedy(model, ids, 16)
    engine.check_integrity()
