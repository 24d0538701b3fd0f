"""A `tokenizers` backend for the SentencePiece-BPE vocabularies GGUF files call "llama" (Gemma here):
byte fallback, spaces spelled "▁", merges rebuilt from the vocabulary because the file lists none.

Gemma files store multi-space tokens as real spaces, so those are respelled "▁▁..." first; merges rank
by the position of the merged token in the file (Gemma's scores do not follow the merge order), then
longer left pieces first, the way transformers rebuilds them.
"""
from __future__ import annotations

from tokenizers import Tokenizer as Backend
from tokenizers import decoders, models, normalizers, pre_tokenizers

SPACE = "\u2581"


def respelled(tokens: list[str]) -> list[str]:
    return [SPACE * len(t) if " " in t and not t.strip() else t for t in tokens]


def rebuilt_merges(tokens: list[str]) -> list[tuple[str, str]]:
    """Every split of a token into two vocabulary pieces is a merge, ranked by the token's position."""
    vocab = {t: i for i, t in enumerate(tokens)}
    ranked = []
    for index, token in enumerate(tokens):
        for cut in range(1, len(token)):
            left, right = token[:cut], token[cut:]
            if left in vocab and right in vocab:
                ranked.append((index, -len(left), -len(right), left, right))
    ranked.sort()
    return [(left, right) for *_, left, right in ranked]


def spm_bpe_backend(tokens: list[str], unk_token: str = "<unk>") -> Backend:
    tokens = respelled(tokens)
    vocab = {t: i for i, t in enumerate(tokens)}
    backend = Backend(models.BPE(vocab=vocab, merges=rebuilt_merges(tokens), fuse_unk=True,
                                 unk_token=unk_token, byte_fallback=True))
    backend.normalizer = normalizers.Replace(" ", SPACE)
    backend.pre_tokenizer = pre_tokenizers.Split(" ", behavior="merged_with_previous")
    backend.decoder = decoders.Sequence([decoders.Replace(SPACE, " "), decoders.ByteFallback(), decoders.Fuse()])
    return backend
