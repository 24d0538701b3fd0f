"""`cachegate train matcher --verifier --verifier-holdout D,..`: the verifier never trains on one fold of domains,
and the cut with its logit floor is fitted on that fold's lookups alone."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from cachegate.matcher_train import data as corpus_data
from cachegate.matcher_train.command import HOLDOUT, holdout_fold, verifier_rows

pytestmark = pytest.mark.skipif(not (corpus_data.DEFAULT_DATA / "intents" / "clinc150.json").exists(),
                                reason="needs ../shared/data")


@pytest.fixture(scope="module")
def corpus():
    return corpus_data.load_corpus(corpus_data.DEFAULT_DATA, corpus_data.QUICK, [], 0)


def test_the_holdout_names_one_fold_in_any_order(corpus):
    first = corpus.folds[0]
    assert holdout_fold(corpus, list(reversed(first))) == first
    assert holdout_fold(corpus, []) == []
    with pytest.raises(SystemExit, match="one fold"):
        holdout_fold(corpus, [first[0], corpus.folds[1][0]])


def test_the_verifier_trains_on_no_question_of_the_held_out_fold(corpus):
    fold = corpus.folds[1]
    domain_of = corpus.domain_of()
    rows = verifier_rows(corpus, fold)
    assert rows and not any(domain_of[i] in fold for _, i in rows)
    assert len(rows) == sum(domain_of[i] not in fold for _, i in corpus.train)
    assert verifier_rows(corpus, []) == corpus.train


def cli(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cachegate", "train", "matcher", "--quick", "--no-progress",
                           "--threads", "1", *args], check=False, capture_output=True, text=True, timeout=timeout,
                          env=os.environ | {"HF_HUB_OFFLINE": "1"})


def test_a_holdout_without_the_verifier_is_refused(tmp_path):
    done = cli("--verifier-holdout", "banking,credit_cards", "--out", str(tmp_path), timeout=120)
    assert done.returncode != 0 and "needs --verifier" in done.stderr
    assert not (tmp_path / "matcher.json").exists()


def test_the_cut_is_fitted_on_the_held_out_fold(tmp_path):
    done = cli("--verifier", "--verifier-holdout", "credit_cards,banking", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    matcher = json.loads((tmp_path / "matcher.json").read_text())
    assert "--verifier-holdout credit_cards,banking" in matcher["trained"]["command"]
    assert matcher["trained"]["verifier_holdout"] == ["credit_cards", "banking"]
    sets, target = matcher["fitted"]["sets"], matcher["fitted"]["target_false_hit_rate"]
    assert sets[HOLDOUT]["lookups"] > 0 and sets[HOLDOUT]["false_hit_rate"] <= target
    assert (tmp_path / "verifier.safetensors").exists()
    assert "held-out fold" in (tmp_path / "CARD.md").read_text()
