"""config.json -> ModelConfig without weights: rope keys old and new, sliding windows, stop ids, refusals."""
from __future__ import annotations

import pytest

from engine.errors import UnsupportedModelError
from engine.loader.hf_folder import hf_config, our_name

BASE = {"model_type": "llama", "vocab_size": 100, "hidden_size": 64, "intermediate_size": 128,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "max_position_embeddings": 4096, "eos_token_id": 2}


def config(**fields):
    return hf_config(BASE | fields, {})


def test_hf_names_map_to_our_modules():
    assert our_name("model.layers.3.self_attn.q_proj.weight") == "layers.3.attn.q_proj.weight"
    assert our_name("model.layers.0.input_layernorm.weight") == "layers.0.attn_norm.weight"
    assert our_name("model.layers.0.post_attention_layernorm.weight") == "layers.0.mlp_norm.weight"
    assert our_name("model.embed_tokens.weight") == "embed_tokens.weight"
    assert our_name("lm_head.weight") == "lm_head.weight"


def test_rope_theta_and_scaling_from_old_and_new_keys():
    old = config(rope_theta=500000.0, rope_scaling={"type": "linear", "factor": 2.0})
    assert old.rope_theta == 500000.0 and old.rope_scaling == {"rope_type": "linear", "factor": 2.0}
    new = config(rope_parameters={"rope_type": "llama3", "factor": 8.0, "rope_theta": 500000.0})
    assert new.rope_theta == 500000.0 and new.rope_scaling == {"rope_type": "llama3", "factor": 8.0}
    plain = config(rope_parameters={"rope_type": "default", "rope_theta": 10000.0})
    assert plain.rope_scaling is None and config().rope_theta == 10000.0


def test_sliding_window_caps_the_context():
    assert config(model_type="mistral", sliding_window=1024).max_context == 1024
    assert config(model_type="qwen2", sliding_window=1024, use_sliding_window=False).max_context == 4096
    assert config(model_type="mistral", sliding_window=None).max_context == 4096


def test_stop_ids_merge_config_and_generation_config():
    cfg = hf_config(BASE | {"eos_token_id": [128001, 128009]}, {"eos_token_id": [128009, 128008]})
    assert cfg.eos_token_ids == [128001, 128009, 128008]


def test_head_dim_and_bias_defaults():
    assert config().head_dim == 16 and config(head_dim=32).head_dim == 32
    assert config(model_type="qwen2").attention_bias and not config().attention_bias


@pytest.mark.parametrize("fields", [{"model_type": "gpt2"}, {"mlp_bias": True}, {"hidden_act": "gelu"}])
def test_unsupported_checkpoints_are_refused(fields):
    with pytest.raises(UnsupportedModelError):
        config(**fields)
