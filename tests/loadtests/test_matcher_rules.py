"""The decision-rules study: the features a rule reads, each rule's fit holding its target where it was fitted,
leave-one-fold-out judging, and the report."""
from __future__ import annotations

import numpy as np
import pytest

from cachegate.matcher_train import fitting
from cachegate.matcher_train.data import DEFAULT_DATA
from cachegate.matcher_train.settings import TrainSettings
from loadtests.matcher_rules import (
    FEATURES,
    Backed,
    CosineMargin,
    Logistic,
    Looked,
    Radius,
    absent,
    evidence_features,
    joined,
    judged,
    neighbours,
    plot,
    replay,
    soup,
    table,
    with_absent,
)


def looked(rows: list[tuple[float, float, float, bool]], relevant: list[bool] | None = None,
           neighbour: list[float] | None = None) -> Looked:
    """Lookups that all retrieved another answer: (tuned cosine, margin, support, right), and the best entry's
    tuned cosine to its closest other answer in the cache (0 unless given)."""
    reach = neighbour or [0.0] * len(rows)
    x = np.array([[t, m, t, m, s, r] for (t, m, s, _), r in zip(rows, reach)], np.float32)
    n = len(rows)
    return Looked(x, np.ones(n, bool), np.zeros(n, bool), np.zeros(n, bool), np.array([r for *_, r in rows]),
                  np.ones(n, bool) if relevant is None else np.array(relevant))


def test_the_features_are_read_against_the_closest_other_answer_and_count_the_same_answer():
    tuned = np.array([0.9, 0.85, 0.7, 0.6])
    plain = np.array([0.8, 0.82, 0.75, 0.5])
    f = dict(zip(FEATURES, evidence_features(tuned, plain, ["a", "a", "b", "c"], best=0)))
    assert f["tuned"] == pytest.approx(0.9) and f["margin"] == pytest.approx(0.2)        # 0.9 - b's 0.7
    assert f["plain"] == pytest.approx(0.8) and f["plain_margin"] == pytest.approx(0.05)  # 0.8 - b's 0.75
    assert f["support"] == 1


def test_replay_keeps_the_evidence_of_the_best_servable_candidate():
    cache = [("how do I open a savings account", "open"), ("what is needed to open a savings account", "open"),
             ("what name is on my savings account", "name")]
    question = "what do I need to open a savings account"
    e = np.eye(3, dtype=np.float32)
    vectors = {cache[0][0]: e[0], cache[1][0]: (e[0] + 0.3 * e[2]) / np.linalg.norm(e[0] + 0.3 * e[2]),
               cache[2][0]: e[1], question: (0.9 * e[0] + 0.4 * e[1]) / np.linalg.norm([0.9, 0.4])}
    policy = fitting.provisional(np.eye(3, dtype=np.float32), TrainSettings())
    out = replay(policy, cache, [(question, "open"), (question, None)], vectors, top_k=3)
    assert out.right.tolist() == [True, False] and out.relevant.tolist() == [True, False]
    assert out.rivalled.all() and out.col("support")[0] == 1
    assert out.col("margin")[0] == pytest.approx(float(vectors[question] @ (e[0] - e[1])), abs=1e-5)
    assert out.col("neighbour")[0] == pytest.approx(0.0, abs=1e-6)     # "open" entries are orthogonal to "name"


def test_an_entrys_neighbour_is_its_closest_entry_of_another_answer_never_its_own():
    cache = [("a1", "a"), ("a2", "a"), ("b1", "b")]
    vectors = {"a1": np.array([1.0, 0.0], np.float32), "a2": np.array([0.99, 0.141], np.float32),
               "b1": np.array([0.6, 0.8], np.float32)}
    reach = neighbours(fitting.provisional(np.eye(2, dtype=np.float32), TrainSettings()), cache, vectors)
    assert reach["a1"] == pytest.approx(0.6, abs=1e-3)            # b1, not a2 (0.99)
    assert reach["a2"] == pytest.approx(0.99 * 0.6 + 0.141 * 0.8, abs=1e-2)
    assert reach["b1"] == pytest.approx(max(reach["a1"], reach["a2"]), abs=1e-6)


def test_the_shipped_rule_serves_the_most_within_the_target_where_it_is_fitted():
    rows = [(0.9, 0.2, 0, True)] * 60 + [(0.8, 0.05, 0, False)] * 10 + [(0.8, 0.05, 0, True)] * 30
    data = looked(rows)
    cut = CosineMargin().fit(data, 0.02)
    served = CosineMargin.served(data, cut)
    assert served.sum() == 60 and not (served & ~data.right).any()



def test_a_wilson_bound_makes_the_fitted_cut_no_looser_than_the_point_estimate():
    rows = [(0.9, 0.3, 0, True)] * 100 + [(0.85, 0.2, 0, True)] * 58 + [(0.85, 0.2, 0, False)] * 1 \
        + [(0.8, 0.1, 0, True)] * 50 + [(0.8, 0.1, 0, False)] * 2
    data = looked(rows)
    point, bounded = CosineMargin(), CosineMargin(0.9)
    assert bounded.name == "cosine+margin@0.9"
    assert CosineMargin.served(data, point.fit(data, 0.02)).sum() == 211        # 3 wrong of 211: 1.4%
    assert CosineMargin.served(data, bounded.fit(data, 0.02)).sum() == 100      # 1 of 159: bound 2.1%

def test_backed_loosens_only_where_other_entries_share_the_answer_and_out_of_scope_stays_out():
    rows = [(0.9, 0.2, 0, True)] * 60 + [(0.8, 0.05, 0, False)] * 10 + [(0.8, 0.05, 3, True)] * 150
    cut = Backed().fit(looked(rows), 0.02)
    assert Backed().served(looked(rows), cut).sum() == 210         # the backed ones too, the wrong ones not
    leaking = rows + [(0.8, 0.05, 3, False)] * 3    # out-of-scope lookups that look backed: 1.4% of what it serves
    data = looked(leaking, [True] * 220 + [False] * 3)
    assert Backed().served(data, Backed().fit(data, 0.02)).sum() == 60


def test_radius_serves_only_questions_closer_to_the_entry_than_its_other_answers_are():
    rows = [(0.9, 0.2, 0, True)] * 60 + [(0.8, 0.12, 0, True)] * 100 + [(0.8, 0.12, 0, False)] * 10
    reach = [0.5] * 60 + [0.6] * 100 + [0.85] * 10       # the wrong ones' entries sit close to another answer
    data = looked(rows, neighbour=reach)
    cut = Radius().fit(data, 0.02)
    served = Radius().served(data, cut)
    assert served.sum() == 160 and not (served & ~data.right).any()
    assert CosineMargin.served(data, CosineMargin().fit(data, 0.02)).sum() == 60    # without it: the sure ones
    c, m, _ = cut
    assert not (served & ~CosineMargin.served(data, (c, m))).any()                  # never more than its cut


def test_a_soup_averages_the_projection_of_every_seed(monkeypatch):
    from cachegate.matcher_train import retrieval
    seen = []

    def trained(rows, vectors, cfg, scratch):
        seen.append(cfg.seed)
        return np.full((2, 2), float(cfg.seed), np.float32)
    monkeypatch.setattr(retrieval, "train_projection", trained)
    assert soup([], {}, TrainSettings(), "", (0, 1, 5)) == pytest.approx(np.full((2, 2), 2.0))
    assert seen == [0, 1, 5]


def test_the_logistic_floor_comes_from_out_of_fold_scores_and_holds_the_target():
    rng = np.random.default_rng(0)
    parts = []
    for _ in range(4):
        right = rng.random(300) < 0.7
        margin = np.where(right, rng.normal(0.15, 0.05, 300), rng.normal(0.0, 0.05, 300))
        parts.append(looked([(0.8, float(m), 0, bool(r)) for m, r in zip(margin, right)]))
    rule = Logistic("logistic", ("tuned", "margin", "support"))
    fitted = rule.fit_parts(parts, 0.02)
    served = rule.served_by(fitted, joined(parts))
    assert 0.4 < served.mean() < 0.7
    assert (served & ~joined(parts).right).sum() / served.sum() <= 0.03


def test_absent_lookups_find_only_other_answers_and_every_one_served_is_wrong():
    cache = [("how do I open a savings account", "open"), ("what name is on my savings account", "name")]
    question = "what do I need to open a savings account"
    e = np.eye(2, dtype=np.float32)
    vectors = {cache[0][0]: e[0], cache[1][0]: e[1], question: (0.9 * e[0] + 0.44 * e[1]) / np.linalg.norm([0.9, 0.44])}
    policy = fitting.provisional(np.eye(2, dtype=np.float32), TrainSettings())
    out = absent(policy, cache, [(question, "open"), ("anything else", None)], vectors | {"anything else": e[0]}, 2)
    assert len(out) == 1                                     # out-of-scope questions have no answer to take out
    assert not out.right.any() and not out.relevant.any()
    assert out.col("tuned")[0] == pytest.approx(float(vectors[question] @ e[1]), abs=1e-5)   # "name", the only one
    assert not out.rivalled[0]                               # nothing of another answer is left to rival it


def test_a_share_of_absent_lookups_is_mixed_into_what_the_rule_is_fitted_on():
    fold = looked([(0.9, 0.2, 0, True)] * 60 + [(0.8, 0.1, 0, True)] * 40 + [(0.3, 0.0, 0, False)] * 10,
                  [True] * 100 + [False] * 10)
    gone = looked([(0.8, 0.1, 0, False)] * 100, [False] * 100)
    assert len(with_absent(fold, gone, 0.2)) == 110 + 25         # 25 of 125 questions asked have no answer cached
    assert len(with_absent(fold, gone, 0.0)) == 110 and len(with_absent(fold, gone, 0.9)) == 210     # all there is
    plain = CosineMargin().fit(fold, 0.02)
    mixed = CosineMargin().fit(with_absent(fold, gone, 0.2), 0.02)
    assert CosineMargin.served(fold, plain).sum() == 100         # no absent lookups: the 0.8s are served
    assert CosineMargin.served(fold, mixed).sum() == 60          # with them, the 0.8s' wrong neighbours count
    result = judged(CosineMargin(), [fold, fold], [fold, fold], fold, 0.02, [gone, gone], share=0.2)
    assert result["unseen_absent"]["served"] == 0 and result["test_with_oos"]["served"] == 60


def test_every_fold_is_judged_by_a_rule_fitted_on_the_others():
    good = looked([(0.9, 0.2, 0, True)] * 50 + [(0.7, 0.02, 0, False)] * 5)
    odd = looked([(0.9, 0.2, 0, False)] * 20 + [(0.9, 0.2, 0, True)] * 35)     # its wrong hits look right
    result = judged(CosineMargin(), [good, good, odd], [good, good, odd], None, 0.02)
    assert [f["wrong"] for f in result["per_fold_val"]] == [0, 0, 20]       # fitted without it, it is fooled
    assert result["unseen_val"]["lookups"] == 165 and "test_with_oos" not in result
    gone = looked([(0.9, 0.2, 0, False)] * 3 + [(0.25, 0.2, 0, False)] * 7, [False] * 10)
    result = judged(CosineMargin(), [good, good, odd], [good, good, odd], None, 0.02, [gone, gone, gone])
    # the folds judged by a cut fitted with `odd` serve nothing; the third, by one fitted on `good` alone, 3 of 10
    assert result["unseen_absent"]["lookups"] == 30 and result["unseen_absent"]["served"] == 3


def test_the_report_has_a_row_per_rule_and_draws_them(tmp_path):
    f = {"served_rate": 0.36, "false_hit_rate": 0.021, "out_of_scope_served": 0.015}
    gone = {"served_rate": 0.041, "false_hit_rate": 1.0, "out_of_scope_served": 0.041}
    results = [{"rule": r, "unseen_val": f, "unseen_test": f, "test_with_oos": f, "unseen_absent": gone}
               for r in ("cosine+margin", "backed")]
    text = table(results)
    assert len(text.splitlines()) == 4
    assert "| backed | 36.0%, 2.10% (oos 1.5%) | 36.0%, 2.10% (oos 1.5%) | 36.0%, 2.10% (oos 1.5%) | 4.1% |" in text
    plot(results, tmp_path / "rules.png")
    assert (tmp_path / "rules.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.skipif(not (DEFAULT_DATA / "intents" / "clinc150.json").exists(), reason="needs ../shared/data")
def test_the_quick_study_runs_end_to_end_and_judges_every_rule(tmp_path):
    import json

    from loadtests.matcher_rules import RULES, main
    assert main(["--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "matcher_rules.json").read_text())
    assert [r["rule"] for r in report["results"]] == [r.name for r in RULES]
    for r in report["results"]:
        assert r["unseen_val"]["lookups"] == sum(f["lookups"] for f in r["per_fold_val"]) > 0
        assert r["test_with_oos"]["lookups"] > 0 and r["test_with_oos"]["out_of_scope_served"] is not None
    assert (tmp_path / "matcher_rules.png").stat().st_size > 0
