"""LoRA in a few lines: a frozen `nn.Linear` plus a trainable low-rank update B·A scaled by alpha/rank,
put on the chosen projections of a model, then merged back into plain weights (or saved on their own).

B starts at zero, so an adapted model first computes exactly what the base does.
"""
from __future__ import annotations

import math

import torch
from torch import nn

TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, rank: int, alpha: float, dropout: float = 0.0) -> None:
        super().__init__()
        self.base, self.scale = base, alpha / rank
        self.lora_a = nn.Parameter(torch.empty(rank, base.in_features))
        self.lora_b = nn.Parameter(torch.zeros(base.out_features, rank))
        nn.init.kaiming_uniform_(self.lora_a, a=math.sqrt(5))
        self.dropout = nn.Dropout(dropout) if dropout else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + (self.dropout(x) @ self.lora_a.T @ self.lora_b.T) * self.scale

    def delta(self) -> torch.Tensor:
        """The update the adapter adds to the base weight: [out, in]."""
        return (self.lora_b @ self.lora_a) * self.scale


def add_adapters(model: nn.Module, rank: int, alpha: float, dropout: float = 0.0,
                 targets: tuple[str, ...] = TARGETS) -> dict[str, LoRALinear]:
    """Freeze `model` and wrap every Linear named in `targets`; returns the adapters by module name."""
    for p in model.parameters():
        p.requires_grad_(False)
    adapters = {}
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            if child_name in targets and isinstance(child, nn.Linear):
                adapter = LoRALinear(child, rank, alpha, dropout)
                setattr(module, child_name, adapter)
                adapters[f"{name}.{child_name}" if name else child_name] = adapter
    return adapters


@torch.no_grad()
def merge_adapters(model: nn.Module, adapters: dict[str, LoRALinear]) -> None:
    """Fold each adapter into its base weight and put the plain Linear back."""
    for name, adapter in adapters.items():
        adapter.base.weight += adapter.delta().to(adapter.base.weight.dtype)
        parent_name, _, child_name = name.rpartition(".")
        setattr(model.get_submodule(parent_name) if parent_name else model, child_name, adapter.base)


def adapter_tensors(adapters: dict[str, LoRALinear]) -> dict[str, torch.Tensor]:
    """The adapter alone, for safetensors: `<module>.lora_a` [r, in] and `<module>.lora_b` [out, r] (scaled)."""
    out = {}
    for name, adapter in adapters.items():
        out[f"{name}.lora_a"] = adapter.lora_a.detach().contiguous()
        out[f"{name}.lora_b"] = (adapter.lora_b * adapter.scale).detach().contiguous()
    return out
