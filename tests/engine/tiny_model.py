"""A tiny random-weight Llama (GQA, one sliding-window layer and one global) with a word-level
tokenizer: engines built on it in a second, for tests that compare two ways of running one model
(attention backends, compiled layers, CUDA graphs) token for token."""
from __future__ import annotations

from pathlib import Path

import torch
from tokenizers import Tokenizer as Backend
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import WhitespaceSplit

from engine.config import FULL, SLIDING, EngineConfig, ModelConfig
from engine.llm_engine import LLMEngine
from engine.loader import Checkpoint
from engine.model_runner import ModelRunner
from engine.tokenizer import Tokenizer

VOCAB, HIDDEN, FFN, HQ, HKV, D = 256, 128, 256, 4, 2, 64


def tiny_config() -> ModelConfig:
    return ModelConfig(architecture="llama", vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=FFN,
                       num_layers=2, num_heads=HQ, num_kv_heads=HKV, head_dim=D, max_context=256,
                       tie_word_embeddings=False, sliding_window=8, layer_types=[SLIDING, FULL],
                       name="tiny-random-llama")


def random_weights(cfg: ModelConfig, seed: int = 0) -> dict[str, torch.Tensor]:
    """Checkpoint names, [out, in]. A small embedding lets attention dominate the residual stream (so a
    kernel error shows in the tokens); a large LM head spreads the logits so greedy picks are not near ties."""
    gen = torch.Generator().manual_seed(seed)
    linear = lambda o, i: torch.randn(o, i, generator=gen) / i ** 0.5
    w = {"embed_tokens.weight": 0.1 * torch.randn(VOCAB, HIDDEN, generator=gen),
         "lm_head.weight": torch.randn(VOCAB, HIDDEN, generator=gen), "norm.weight": torch.ones(HIDDEN)}
    for layer in range(cfg.num_layers):
        p = f"layers.{layer}."
        w |= {p + "attn_norm.weight": torch.ones(HIDDEN), p + "mlp_norm.weight": torch.ones(HIDDEN),
              p + "attn.q_proj.weight": linear(HQ * D, HIDDEN), p + "attn.k_proj.weight": linear(HKV * D, HIDDEN),
              p + "attn.v_proj.weight": linear(HKV * D, HIDDEN), p + "attn.o_proj.weight": linear(HIDDEN, HQ * D),
              p + "mlp.gate_proj.weight": linear(FFN, HIDDEN), p + "mlp.up_proj.weight": linear(FFN, HIDDEN),
              p + "mlp.down_proj.weight": linear(HIDDEN, FFN)}
    return w


def word_tokenizer() -> Tokenizer:
    backend = Backend(WordLevel({f"t{i}": i for i in range(VOCAB)}, unk_token="t0"))
    backend.pre_tokenizer = WhitespaceSplit()
    return Tokenizer(backend)


def tiny_engine(device: torch.device | str = "cpu", **options) -> LLMEngine:
    """`options`: EngineConfig fields (attention_backend, dtype, compile...)."""
    cfg = tiny_config()
    checkpoint = Checkpoint(cfg, random_weights(cfg), word_tokenizer(), Path("tiny"))
    config = EngineConfig(**({"model": "tiny", "device": str(device), "dtype": "float32", "block_size": 16,
                              "num_kv_blocks": 64, "max_num_seqs": 8, "max_num_batched_tokens": 32} | options))
    return LLMEngine(ModelRunner(checkpoint, config), checkpoint.tokenizer, cfg.name)


def prompts() -> list[list[int]]:
    """A shared 40-token prefix (two full blocks to reuse) under three requests, plus two unrelated ones."""
    gen = torch.Generator().manual_seed(1)
    ids = lambda n: torch.randint(VOCAB, (n,), generator=gen).tolist()
    shared = ids(40)
    return [shared + ids(5), shared + ids(23), ids(1), shared + ids(1), ids(57)]


def greedy_tokens(engine: LLMEngine, max_tokens: int = 12) -> list[list[int]]:
    """The first prompt alone (so the others find its prefix cached), then the rest together."""
    from engine.sampling_params import SamplingParams
    params = SamplingParams(max_tokens=max_tokens, temperature=0, ignore_eos=True)
    first = prompts()[:1]
    return ([o.token_ids for o in engine.generate_many(first, params)]
            + [o.token_ids for o in engine.generate_many(prompts()[1:], params)])
