"""`train matcher --verifier` cross-fits the verifier like the projection: each fold's lookups get their logits from
a verifier that trained on no question of the fold, so the logit floor is fitted on logits of unseen domains."""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest

from cachegate.matcher_train import command
from cachegate.matcher_train import data as corpus_data
from cachegate.matcher_train.settings import TrainSettings, quick

pytestmark = pytest.mark.skipif(not (corpus_data.DEFAULT_DATA / "intents" / "clinc150.json").exists(),
                                reason="needs ../shared/data")


class Recorder:
    """Stands in for the cross-encoder's training and scoring (the real ones run in test_train_matcher.py): records
    the texts each verifier trained on and the pairs it was asked to score."""

    def __init__(self) -> None:
        self.trained: dict[str, set[str]] = {}
        self.scored: dict[str, list[tuple[str, str]]] = {}

    def train(self, pairs, cfg, folder: Path, scratch: str) -> None:
        self.trained[str(folder)] = {p.a for p in pairs} | {p.b for p in pairs}

    def verifier(self, folder: str, threads: int = 1):
        recorder = self

        class Scoring:
            def logits(self, pairs):
                recorder.scored.setdefault(folder, []).extend(pairs)
                return np.zeros(len(pairs), np.float32)
        return Scoring()


def test_each_fold_is_scored_by_a_verifier_that_never_read_it(tmp_path, monkeypatch):
    recorder = Recorder()
    monkeypatch.setattr("cachegate.matcher_train.verifier_train.train_verifier", recorder.train)
    monkeypatch.setattr("cachegate.cache.semantic.verifier.Verifier", recorder.verifier)
    args = argparse.Namespace(data=str(corpus_data.DEFAULT_DATA), quick=True, leave_out="", seed=0, verifier=True,
                              from_verified=None, from_curated=None, embedding_cache=None,
                              target_false_hit_rate=0.02, confidence=0.5, no_action_pairs=False, absent_share=0.0)
    cfg = quick(TrainSettings(threads=1, progress=False))
    command.train(cfg, args, tmp_path)

    corpus = corpus_data.load_corpus(corpus_data.DEFAULT_DATA, corpus_data.QUICK, [], 0)
    domain_of = corpus.domain_of()
    shipped = str(tmp_path)
    folds = [f for f in recorder.trained if f != shipped]
    assert len(folds) == len(corpus.folds) and shipped in recorder.trained
    for k, fold in enumerate(corpus.folds):
        folder = next(f for f in folds if Path(f).name == f"fold-verifier-{k}")
        in_fold = {t for t, i in corpus.train + corpus.val if domain_of[i] in fold}
        assert in_fold and not recorder.trained[folder] & in_fold          # trained on no question of the fold
        asked = {q for q, _ in recorder.scored[folder]}
        fold_val = {t for t, i in corpus.val if domain_of[i] in fold}
        assert asked and asked <= fold_val | set(corpus.out_of_scope)     # scored only the fold's lookups
        assert asked & fold_val
    everything = {t for t, _ in corpus.train}
    assert recorder.trained[shipped] >= everything                        # the shipped one reads every domain
