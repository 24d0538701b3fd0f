"""Copying checkpoint tensors (our names, unpacked, [out, in]) into a model whose q|k|v and gate|up
projections are packed, checking that every parameter is filled exactly once; building a model on its
device without random init; and laying the loaded weights out for the device's GEMM."""
from __future__ import annotations

import torch
from torch import nn

from engine.layers.attention import Attention
from engine.layers.linear import Linear, packed_rows

PACKED = {  # checkpoint projection -> (our packed module, shard index)
    "q_proj": ("qkv_proj", 0), "k_proj": ("qkv_proj", 1), "v_proj": ("qkv_proj", 2),
    "gate_proj": ("gate_up_proj", 0), "up_proj": ("gate_up_proj", 1),
}


def load_weights(model: nn.Module, weights: dict[str, torch.Tensor], tied: bool) -> None:
    params = dict(model.named_parameters())
    pending = {name: p.numel() for name, p in params.items()}  # elements still to fill
    for name, w in weights.items():
        if name == "lm_head.weight" and tied:
            continue
        module, kind = name.rsplit(".", 1)                     # "layers.3.attn.q_proj", "weight"
        parent, _, proj = module.rpartition(".")
        packed, index = PACKED.get(proj, (proj, 0))
        target_name = f"{parent}.{packed}" if parent else packed
        target = model.get_submodule(target_name)
        if isinstance(target, Linear):
            target.load(kind, w, index)
            name = f"{target_name}.{kind}"
        else:
            assert params[name].shape == w.shape, f"{name}: {tuple(w.shape)} != {tuple(params[name].shape)}"
            params[name].data.copy_(w)
        pending[name] -= w.numel()
    missing = [name for name, left in pending.items() if left != 0]
    assert not missing, f"checkpoint lacks (or overfills) {missing[:5]}"


def materialize(model: nn.Module, weights: dict[str, torch.Tensor], tied: bool,
                device: torch.device | str, dtype: torch.dtype) -> nn.Module:
    """A model built on the meta device -> allocated on `device` in `dtype`, weights loaded."""
    model = model.to_empty(device=device).to(dtype)
    load_weights(model, weights, tied)
    lay_out(model, tied, device, dtype)
    return model.eval().requires_grad_(False)


def lay_out(model: nn.Module, tied: bool, device: torch.device | str, dtype: torch.dtype) -> None:
    """Give a tied model an LM head over its embedding, then reorder weights for the CPU's GEMM where
    that pays (layers/linear.py)."""
    for module in model.modules():
        if isinstance(module, Attention):
            module.layer_index = torch.tensor(module.layer)
    if tied:
        model.lm_head = Linear.sharing(model.embed_tokens.weight)
    if rows := packed_rows(device, dtype):
        for layer in model.layers.modules():
            if isinstance(layer, Linear):
                layer.pack(rows)
    if rows := packed_rows(device, dtype, head=True):
        model.lm_head.pack(rows, keep_weight=tied)
