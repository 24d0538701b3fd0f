"""Building our `Tokenizer` from a GGUF file's tokenizer.ggml.* metadata: byte-level BPE ("gpt2") and
SentencePiece BPE ("llama", e.g. Gemma; see spm_tokenizer.py).

`tokenizer.ggml.pre` names llama.cpp's pre-tokenizer; each supported name maps to a `tokenizers`
pre-tokenizer that splits text the same way (smollm: every digit alone, then the GPT-2 regex).
A rebuilt SentencePiece backend is slow to make, so it is kept as JSON in the cache folder.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from tokenizers import AddedToken, decoders, models, pre_tokenizers, processors
from tokenizers import Tokenizer as Backend

from engine.errors import UnsupportedModelError
from engine.loader.spm_tokenizer import spm_bpe_backend
from engine.tokenizer import Tokenizer

CONTROL, USER_DEFINED = 3, 4  # llama.cpp token types


def gpt2_split() -> pre_tokenizers.PreTokenizer:
    return pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)


def smollm_split() -> pre_tokenizers.PreTokenizer:
    return pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), gpt2_split()])


PRE_TOKENIZERS: dict[str, Callable[[], pre_tokenizers.PreTokenizer]] = {
    "default": gpt2_split, "gpt2": gpt2_split, "smollm": smollm_split,
}


def bpe_backend(tokens: list[str], merges: list[str], pre: str) -> Backend:
    if pre not in PRE_TOKENIZERS:
        have = sorted(PRE_TOKENIZERS)
        raise UnsupportedModelError(f"GGUF pre-tokenizer {pre!r} is not supported yet (have {have})")
    vocab = {tok: i for i, tok in enumerate(tokens)}
    pairs = [tuple(m.split(" ", 1)) for m in merges]
    backend = Backend(models.BPE(vocab=vocab, merges=pairs, fuse_unk=False, byte_fallback=False))
    backend.pre_tokenizer = PRE_TOKENIZERS[pre]()
    backend.decoder = decoders.ByteLevel()
    return backend


def add_special_tokens(backend: Backend, tokens: list[str], token_types: list[int]) -> None:
    """Control tokens become special added tokens, user-defined ones plain added tokens: both match whole."""
    vocab = backend.get_vocab()

    def added(kind: int, special: bool) -> list[AddedToken]:   # only tokens the vocabulary spells so
        ids = [i for i, t in enumerate(token_types) if t == kind and tokens[i] in vocab]
        return [AddedToken(tokens[i], special=special, normalized=False) for i in ids]

    backend.add_special_tokens(added(CONTROL, special=True))
    backend.add_tokens(added(USER_DEFINED, special=False))


def add_post_processor(backend: Backend, bos: tuple[str, int] | None,
                       eos: tuple[str, int] | None) -> None:
    """Prepend BOS / append EOS on `encode(..., add_special_tokens=True)` when the GGUF asks for it."""
    if bos is None and eos is None:
        return
    single = " ".join([*([bos[0]] if bos else []), "$A", *([eos[0]] if eos else [])])
    specials = [t for t in (bos, eos) if t]
    backend.post_processor = processors.TemplateProcessing(single=single, special_tokens=specials)


def special_tokens(meta: dict, tokens: list[str]) -> dict[str, tuple[str, int]]:
    """bos_token / eos_token / unk_token / pad_token -> (text, id), for those the GGUF names."""
    found = {}
    keys = (("bos", "bos_token"), ("eos", "eos_token"), ("unknown", "unk_token"), ("padding", "pad_token"))
    for key, name in keys:
        i = meta.get(f"tokenizer.ggml.{key}_token_id")
        if i is not None and 0 <= i < len(tokens):
            found[name] = (tokens[i], i)
    return found


def build_backend(meta: dict, cache_file: Path | None) -> Backend:
    kind = meta.get("tokenizer.ggml.model")
    tokens, types = meta["tokenizer.ggml.tokens"], meta.get("tokenizer.ggml.token_type", [])
    if kind == "gpt2":
        backend = bpe_backend(tokens, meta["tokenizer.ggml.merges"], meta.get("tokenizer.ggml.pre", "default"))
    elif kind == "llama":
        if cache_file is not None and cache_file.is_file():
            return Backend.from_file(str(cache_file))
        backend = spm_bpe_backend(tokens)
    else:
        raise UnsupportedModelError(f"GGUF tokenizer model {kind!r} is not supported (have 'gpt2', 'llama')")
    add_special_tokens(backend, tokens, types)
    if kind == "llama" and cache_file is not None:
        tmp = cache_file.with_suffix(f".{os.getpid()}.tmp")
        backend.save(str(tmp))
        os.replace(tmp, cache_file)
    return backend


def build_gguf_tokenizer(meta: dict, cache_file: Path | None = None) -> Tokenizer:
    """meta: GGUF key -> python value (only tokenizer.* keys are read); `cache_file`: where a rebuilt
    SentencePiece backend is saved / read back."""
    tokens = meta["tokenizer.ggml.tokens"]
    backend = build_backend(meta, cache_file)
    special = special_tokens(meta, tokens)
    bos = special.get("bos_token") if meta.get("tokenizer.ggml.add_bos_token") else None
    eos = special.get("eos_token") if meta.get("tokenizer.ggml.add_eos_token") else None
    add_post_processor(backend, bos, eos)
    texts = {name: text for name, (text, _) in special.items()}
    return Tokenizer(backend, meta.get("tokenizer.chat_template"), texts)
