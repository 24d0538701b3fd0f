"""Questions whose answer is not cached, in the matcher's fitting: each fold's val questions looked up with their own
intent's entries taken out of the cache (every hit wrong), and a share of them mixed into what the cut is fitted
on (`cachegate train matcher --absent-share`)."""
from __future__ import annotations

import numpy as np
import pytest

from cachegate.matcher_train import fitting, simulate
from cachegate.matcher_train.data import Corpus
from cachegate.matcher_train.settings import TrainSettings


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, np.float32)
    return v / np.linalg.norm(v)


def small_corpus() -> tuple[Corpus, dict[str, np.ndarray]]:
    """Two intents of one domain, one of another; their val questions sit next to their own intent's entries."""
    train = [("open an account", "open"), ("start an account", "open"), ("close an account", "close"),
             ("shut my account", "close"), ("what is the weather", "weather")]
    val = [("how do i open an account", "open"), ("how do i close an account", "close")]
    vectors = {"open an account": unit(1, 0, 0, 0), "start an account": unit(1, 0.1, 0, 0),
               "close an account": unit(0.6, 0.8, 0, 0), "shut my account": unit(0.6, 0.8, 0.1, 0),
               "what is the weather": unit(0, 0, 0, 1),
               "how do i open an account": unit(1, 0.05, 0.05, 0), "how do i close an account": unit(0.62, 0.78, 0, 0),
               "play a song": unit(0, 0, 1, 0)}
    corpus = Corpus(train, val, ["play a song"], [], [], {"bank": ["open", "close"], "sky": ["weather"]},
                    [["bank"], ["sky"]], [])
    return corpus, vectors


def test_absent_lookups_are_the_folds_in_scope_questions_without_their_own_answer():
    corpus, vectors = small_corpus()
    cfg = TrainSettings(per_intent=2, top_k=4)
    looked = fitting.fold_absent(corpus, ["bank"], 0, vectors, np.eye(4, dtype=np.float32), cfg)
    assert sorted(looked.query) == ["how do i close an account", "how do i open an account"]   # no out-of-scope
    assert not looked.relevant.any() and not looked.right.any()
    by_query = dict(zip(looked.query, looked.entry))
    # with "open" taken out, the open question's best candidate is a "close" entry, and the other way round
    assert by_query["how do i open an account"] in {"close an account", "shut my account"}
    assert by_query["how do i close an account"] in {"open an account", "start an account"}
    present = fitting.fold_lookups(corpus, ["bank"], 0, vectors, np.eye(4, dtype=np.float32), cfg)
    assert present.right[present.relevant].all()                  # with its answer cached, each is served right


def test_a_share_of_absent_lookups_joins_the_fitted_lookups_and_every_one_served_is_wrong():
    n = 80
    present = simulate.Lookups("present", np.full(n, 0.9), np.full(n, 0.2), np.ones(n, bool), np.zeros(n, bool),
                               np.zeros(n, bool), np.ones(n, bool), np.ones(n, bool), ["q"] * n, ["e"] * n)
    absent = simulate.Lookups("absent", np.full(n, 0.8), np.full(n, 0.1), np.ones(n, bool), np.zeros(n, bool),
                              np.zeros(n, bool), np.zeros(n, bool), np.zeros(n, bool), ["q"] * n, ["e"] * n)
    assert fitting.with_absent(present, absent, 0.0, 0) is present
    mixed = fitting.with_absent(present, absent, 0.2, 0)
    assert len(mixed) == n + 20 and mixed.name == "present"          # 20 of 100 questions have no answer cached
    assert len(fitting.with_absent(present, absent, 0.9, 0)) == 2 * n    # no more than there are
    served = mixed.served(simulate.Cut(0.75, 0.05, 1.01))
    assert served[n:].all() and not mixed.right[n:].any()            # a loose cut serves them, all wrong
    cosine, margin, _ = fitting.fit_rivalled([mixed], 0.02, 0.0)
    fitted = mixed.served(simulate.Cut(cosine, margin, 1.01))
    assert fitted[:n].all() and not fitted[n:].any()                  # fitted with them, it leaves them out
    cosine, margin, _ = fitting.fit_rivalled([present], 0.02, 0.0)
    assert absent.served(simulate.Cut(cosine, margin, 1.01)).all()    # fitted without them, it serves them all
    assert fitting.figures(absent, simulate.Cut(0.75, 0.05, 1.01))["false_hit_rate"] == pytest.approx(1.0)
