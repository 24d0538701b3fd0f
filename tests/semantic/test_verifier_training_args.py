"""The verifier trains under bfloat16 autocast only on CPUs that multiply bfloat16 natively: emulated, the quick
run's verifier stage took 179 s instead of 14."""
from __future__ import annotations

from cachegate.cache.semantic import embedder
from cachegate.matcher_train.settings import TrainSettings
from cachegate.matcher_train.verifier_train import training_arguments


def test_bf16_autocast_follows_the_cpus_bf16_support(monkeypatch, tmp_path):
    monkeypatch.setattr(embedder, "native_bf16", lambda: False)
    assert training_arguments(TrainSettings(), str(tmp_path)).bf16 is False
    monkeypatch.setattr(embedder, "native_bf16", lambda: True)
    assert training_arguments(TrainSettings(), str(tmp_path)).bf16 is True
    assert training_arguments(TrainSettings(bf16=False), str(tmp_path)).bf16 is False
