"""Which attention backend a model runner uses: its own module, so the interface (`backend.py`) knows none of
its implementations and each implementation imports only the interface."""
from __future__ import annotations

import importlib
import logging

import torch

from engine.attention.backend import AttentionBackend
from engine.attention.cpu_backend import CpuBackend
from engine.attention.cpu_kernels import available
from engine.attention.torch_ref import TorchReferenceBackend

log = logging.getLogger(__name__)


def select_backend(device: torch.device | str, name: str = "auto") -> AttentionBackend:
    """"auto": Triton on CUDA when its module imports, the C kernel on CPU when it builds, else the
    torch reference; or name one ("cpu" still falls back to torch per call where the kernel cannot)."""
    if name not in ("auto", "torch", "cpu", "triton"):
        raise ValueError(f"unknown attention backend {name!r} (auto | torch | cpu | triton)")
    if name == "cpu" or (name == "auto" and torch.device(device).type == "cpu" and available()):
        return CpuBackend()
    if name == "triton" or (name == "auto" and torch.device(device).type == "cuda"):
        try:
            return importlib.import_module("engine.attention.triton_backend").TritonBackend()
        except (ImportError, AttributeError) as exc:
            if name == "triton":
                raise
            log.warning("Triton attention unavailable (%s); using the torch reference", exc)
    return TorchReferenceBackend()
