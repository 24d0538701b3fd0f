"""`cachegate train matcher --quick`: every stage runs end to end on a slice of the dev data and writes a
matcher that loads and decides."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cachegate.cache.semantic.matcher_files import load_policy
from cachegate.cache.semantic.verifier import Verifier
from cachegate.matcher_train.data import DEFAULT_DATA
from policies.thresholds import Candidate

pytestmark = pytest.mark.skipif(not (DEFAULT_DATA / "intents" / "clinc150.json").exists(),
                                reason="needs ../shared/data")


@pytest.fixture(scope="module")
def quick_matcher(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("matcher")
    done = subprocess.run([sys.executable, "-m", "cachegate", "train", "matcher", "--quick", "--verifier", "--out",
                           str(out), "--no-progress", "--threads", "1"], check=False, capture_output=True, text=True,
                          timeout=600, env=os.environ | {"HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_quick_training_writes_every_file_with_its_card(quick_matcher):
    names = {p.name for p in quick_matcher.iterdir()}
    assert {"matcher.json", "projection.safetensors", "verifier.safetensors", "verifier.json", "CARD.md"} <= names
    matcher = json.loads((quick_matcher / "matcher.json").read_text())
    assert matcher["trained"]["settings"]["seed"] == 0 and "--quick" in matcher["trained"]["command"]
    assert len(matcher["trained"]["folds"]) == 2 and matcher["trained"]["verifier"]
    sets = matcher["fitted"]["sets"]
    assert {"intents (unseen domains, cross-fitted)", "out_of_scope", "quora (held apart)"} <= set(sets)
    assert sets["intents (unseen domains, cross-fitted)"]["lookups"] > 0 and sets["out_of_scope"]["lookups"] > 0
    gone = sets["answer not cached (unseen domains, cross-fitted)"]    # the same questions without their answers
    assert gone["lookups"] == sets["intents (unseen domains, cross-fitted)"]["lookups"] and gone["hit_rate"] == 0
    assert gone["served"] == gone["wrong"]
    assert set(matcher["decision"]["thresholds"]) >= {"0.01", "0.02", "0.1"}
    assert "seed 0" in (quick_matcher / "CARD.md").read_text()


def test_the_quick_matcher_loads_and_decides(quick_matcher):
    policy = load_policy(quick_matcher)
    logits = Verifier(str(quick_matcher), precision="float32").logits(
        [("how do i reset my pin", "how can i reset my pin"), ("how do i reset my pin", "what is the weather")])
    assert logits.shape == (2,) and np.isfinite(logits).all()
    vector = [1.0] + [0.0] * (policy.projection.shape[0] - 1)
    same = Candidate("how do i reset my pin", "How do I reset my PIN?", 1.0, query_vector=vector, entry_vector=vector)
    assert policy.decide(same).hit                                   # the same words hit whatever was fitted
    far = Candidate("how do i reset my pin", "what is the weather", 0.1, query_vector=vector,
                    entry_vector=[0.0, 1.0] + [0.0] * (policy.projection.shape[0] - 2))
    assert not policy.decide(far).hit


def test_a_run_without_the_verifier_removes_an_older_one(quick_matcher, tmp_path):
    for name in ("verifier.safetensors", "verifier.json"):
        (tmp_path / name).write_bytes((quick_matcher / name).read_bytes())
    done = subprocess.run([sys.executable, "-m", "cachegate", "train", "matcher", "--quick", "--out", str(tmp_path),
                           "--no-progress", "--threads", "1"], check=False, capture_output=True, text=True,
                          timeout=600, env=os.environ | {"HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (tmp_path / "verifier.safetensors").exists() and (tmp_path / "projection.safetensors").exists()


def test_concurrent_lookups_share_verifier_calls(quick_matcher):
    verifier = Verifier(str(quick_matcher), precision="float32")
    questions = [f"i lost my credit card number {i}" for i in range(12)]

    async def all_at_once():
        return await asyncio.gather(*(verifier.score(q, ["how do i report a lost card", "what is my balance"])
                                      for q in questions))
    scores = asyncio.run(all_at_once())
    assert all(s.shape == (2,) for s in scores) and verifier.pairs == 2 * len(questions)
    assert 1 <= verifier.calls < len(questions)           # lookups that arrived together shared forward calls
    verifier.close()


def test_the_traced_verifier_scores_like_the_eager_one(quick_matcher):
    pairs = [("how do i reset my pin", "how can i reset my pin"), ("where is my card", "what is the weather"),
             ("hi", "can you tell me why my transfer to my savings account failed yesterday afternoon"),
             ("how do i reset my pin " * 40, "how can i reset my pin")]        # past the verifier's max length
    traced, eager = Verifier(str(quick_matcher), precision="float32"), Verifier(str(quick_matcher),
                                                                                 precision="float32", trace=False)
    assert "traced" in traced.loaded[1].__qualname__ and "traced" not in eager.loaded[1].__qualname__
    for batch in (pairs[:1], pairs):
        assert np.abs(traced.logits(batch) - eager.logits(batch)).max() < 1e-4
