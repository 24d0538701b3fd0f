"""torch.compile of the decoder layers: one graph (dynamic in the token count) serves every layer of a
model and every step, prefill or decode; attention and packed linears stay opaque custom ops, and
inductor fuses what lies between them (norms, rotary, SwiGLU, residuals)."""
from __future__ import annotations

from torch import nn


def compile_layers(model: nn.Module) -> None:
    """Compile each decoder layer in place (once: a model shared by engines is compiled once)."""
    for layer in model.layers:
        if getattr(layer, "_compiled_call_impl", None) is None:
            layer.compile(dynamic=True, fullgraph=True)
