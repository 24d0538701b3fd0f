"""`cachegate train matcher --quick`: every stage runs end to end on a slice of the dev data and writes a
matcher that loads and decides."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cachegate.matcher_train.data import DEFAULT_DATA
from cachegate.semantic.matcher_files import load_policy
from cachegate.semantic.verifier import Verifier
from policies.thresholds import Candidate

pytestmark = pytest.mark.skipif(not (DEFAULT_DATA / "intents" / "clinc150.json").exists(),
                                reason="needs ../shared/data")


@pytest.fixture(scope="module")
def quick_matcher(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("matcher")
    done = subprocess.run([sys.executable, "-m", "cachegate", "train", "matcher", "--quick", "--out", str(out),
                           "--no-progress", "--threads", "1"], check=False, capture_output=True, text=True, timeout=600,
                          env=os.environ | {"HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_quick_training_writes_every_file_with_its_card(quick_matcher):
    names = {p.name for p in quick_matcher.iterdir()}
    assert {"matcher.json", "projection.safetensors", "verifier.safetensors", "verifier.json", "CARD.md"} <= names
    matcher = json.loads((quick_matcher / "matcher.json").read_text())
    assert matcher["trained"]["settings"]["seed"] == 0 and "--quick" in matcher["trained"]["command"]
    assert {"intents (calibration domains)", "out_of_scope", "quora (held apart)"} <= set(matcher["fitted"]["sets"])
    assert "seed 0" in (quick_matcher / "CARD.md").read_text()


def test_the_quick_matcher_loads_and_decides(quick_matcher):
    policy = load_policy(quick_matcher)
    logits = Verifier(str(quick_matcher), precision="float32").logits(
        [("how do i reset my pin", "how can i reset my pin"), ("how do i reset my pin", "what is the weather")])
    assert logits.shape == (2,)
    vector = [1.0] + [0.0] * (policy.projection.shape[0] - 1)
    decision = policy.decide(Candidate("how do i reset my pin", "how can i reset my pin", 0.95, query_vector=vector,
                                       entry_vector=vector, verified=float(logits[0])))
    assert 0.0 <= decision.score <= 1.0
