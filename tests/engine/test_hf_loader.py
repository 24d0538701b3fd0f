"""HF folder loading: tiny random models saved by transformers (Llama sharded or not, tied or not,
llama3 rope scaling, biases; Qwen2 q/k/v bias; Qwen3 q/k norm) must give transformers' logits and
greedy ids through our model.
"""
from __future__ import annotations

import pytest
import torch

from engine.config import EngineConfig
from engine.llm_engine import LLMEngine
from engine.loader import load_checkpoint
from engine.model_runner import ModelRunner
from engine.sampling_params import SamplingParams

pytestmark = pytest.mark.slow

VARIANTS = {  # name -> config options; "family": transformers class prefix (Llama), "shard": max shard size
    "plain_sharded": {"tie_word_embeddings": False, "shard": "4MB"},
    "tied_llama3_rope_bias": {
        "tie_word_embeddings": True, "attention_bias": True, "head_dim": 32, "shard": None,
        "rope_parameters": {"rope_type": "llama3", "factor": 8.0,
                            "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                            "original_max_position_embeddings": 64, "rope_theta": 500000.0},
    },
    "qwen2_bias": {"family": "Qwen2", "tie_word_embeddings": True, "shard": None},
    "qwen3_qk_norm": {"family": "Qwen3", "tie_word_embeddings": False, "head_dim": 32, "shard": None},
}


@pytest.fixture(scope="module", params=list(VARIANTS))
def tiny_folder(request, tmp_path_factory, hf_tokenizer):
    import transformers
    options = dict(VARIANTS[request.param])
    shard, family = options.pop("shard"), options.pop("family", "Llama")
    config_class = getattr(transformers, f"{family}Config")
    model_class = getattr(transformers, f"{family}ForCausalLM")
    torch.manual_seed(0)
    config = config_class(vocab_size=49152, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                         initializer_range=0.2, bos_token_id=1, eos_token_id=2, **options)
    model = model_class(config).eval()
    folder = tmp_path_factory.mktemp(request.param)
    model.save_pretrained(folder, **({"max_shard_size": shard} if shard else {}))
    hf_tokenizer.save_pretrained(folder)
    assert shard is None or len(list(folder.glob("*.safetensors"))) > 1
    return folder, model


def test_config_and_flags_come_from_the_folder(tiny_folder):
    folder, model = tiny_folder
    cfg = load_checkpoint(folder).config
    assert (cfg.architecture, cfg.num_layers, cfg.hidden_size) == (model.config.model_type, 2, 64)
    assert (cfg.num_heads, cfg.num_kv_heads) == (4, 2)
    assert cfg.head_dim == (getattr(model.config, "head_dim", None) or 16) and cfg.eos_token_ids == [2]
    assert cfg.max_context == 512 and cfg.tie_word_embeddings == model.config.tie_word_embeddings
    assert cfg.attention_bias == (model.config.model_type == "qwen2" or model.config.attention_bias)
    assert cfg.attention_out_bias == (model.config.model_type == "llama" and model.config.attention_bias)
    assert cfg.qk_norm == (model.config.model_type == "qwen3")
    assert (cfg.rope_scaling or {}).get("rope_type", "default") == model.config.rope_parameters["rope_type"]
    assert cfg.name == folder.name


def test_logits_match_transformers_at_every_position(tiny_folder):
    folder, model = tiny_folder
    runner = ModelRunner(load_checkpoint(folder), EngineConfig(num_kv_blocks=8))
    ids = torch.randint(0, 49152, (40,), generator=torch.Generator().manual_seed(1))
    ours = runner.logits_at_every_position(ids.tolist(), [5, 0, 7])     # [T, V], blocks out of order
    with torch.inference_mode():
        theirs = model(ids[None]).logits[0]
    assert (ours - theirs).abs().max() < 1e-4


def test_greedy_ids_match_transformers(tiny_folder):
    folder, model = tiny_folder
    checkpoint = load_checkpoint(folder)
    engine = LLMEngine(ModelRunner(checkpoint, EngineConfig(num_kv_blocks=64)), checkpoint.tokenizer,
                       checkpoint.config.name)
    ids = torch.randint(3, 49152, (24,), generator=torch.Generator().manual_seed(2)).tolist()
    ours = engine.generate(ids, SamplingParams(max_tokens=20, temperature=0, ignore_eos=True)).token_ids
    with torch.no_grad():
        x = torch.tensor([ids])
        out = model.generate(input_ids=x, attention_mask=torch.ones_like(x), max_new_tokens=20,
                             min_new_tokens=20, do_sample=False)
    theirs = out[0, 24:].tolist()
    assert ours == theirs


def test_tokenizer_json_and_chat_template_match_transformers(tiny_folder):
    from transformers import AutoTokenizer
    folder, _ = tiny_folder
    ours, theirs = load_checkpoint(folder).tokenizer, AutoTokenizer.from_pretrained(folder)
    text = "Hello  world!\n\tdef f(x): return 12345 😀 日本語"
    assert ours.encode(text) == theirs(text)["input_ids"]
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"},
                {"role": "user", "content": "again"}]
    expected = theirs.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                          return_dict=True)
    assert ours.apply_chat_template(messages) == list(expected["input_ids"])
    assert ours.eos_token == "<|im_end|>"
