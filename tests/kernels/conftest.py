"""Kernel tests run compiled on a CUDA machine and in Triton's CPU interpreter elsewhere:
TRITON_INTERPRET=1 is set here, at import, before any kernel module is imported.
"""
from __future__ import annotations

import os

import pytest
import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"


@pytest.fixture(scope="session")
def device() -> torch.device:
    compiled = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET", "0") in ("", "0")
    return torch.device("cuda" if compiled else "cpu")
