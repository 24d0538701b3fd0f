"""dtype names, and "auto": bfloat16 where the device computes it natively, float32 elsewhere on CPU."""
from __future__ import annotations

import pytest
import torch

from engine import config
from engine.config import parse_dtype


def test_names_and_dtypes_pass_through():
    assert parse_dtype("bf16") is torch.bfloat16 and parse_dtype("float32") is torch.float32
    assert parse_dtype(torch.float16) is torch.float16
    with pytest.raises(ValueError, match="unknown dtype"):
        parse_dtype("int8")


@pytest.mark.parametrize("native, want", [(True, torch.bfloat16), (False, torch.float32)])
def test_auto_on_cpu_follows_the_cpus_bf16_support(monkeypatch, native, want):
    monkeypatch.setattr(config, "cpu_has_native_bf16", lambda: native)
    assert parse_dtype("auto", "cpu") is want


def test_the_gateways_default_model_dtype_is_auto():
    from cachegate.settings import ModelSettings
    assert ModelSettings(name="m").dtype == "auto"
