"""The heads study: every head starts as plain MiniLM cosine, training moves it toward the triplets, a replay
judges candidates by the head's vectors while retrieving by plain cosine, and the report."""
from __future__ import annotations

import numpy as np
import pytest

from cachegate.matcher_train import fitting, simulate
from cachegate.matcher_train.pairs import Triplet
from cachegate.matcher_train.settings import TrainSettings
from loadtests.matcher_heads import head_module, plot, table, train_head, tuned_vectors

torch = pytest.importorskip("torch")


def unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)


@pytest.mark.parametrize("kind, d_in", [("linear", 384), ("mlp", 384), ("lowrank16", 384), ("linear", 1152)])
def test_every_head_starts_as_the_plain_vector(kind, d_in):
    x = unit(np.random.default_rng(0).normal(size=(5, d_in)))
    x[:, :384] = unit(x[:, :384])              # rich features lead with the plain unit vector
    with torch.no_grad():
        out = head_module(kind, d_in)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(out, x[:, :384], atol=1e-6)


@pytest.mark.parametrize("symmetric", [False, True])
def test_training_pulls_paraphrases_together_and_pushes_the_hard_negative_away(symmetric):
    rng = np.random.default_rng(1)
    base = unit(rng.normal(size=(8, 384)))
    features, rows = {}, []
    for k in range(8):           # each intent: an anchor and a paraphrase, and a near question of the next intent
        features[f"a{k}"] = base[k]
        features[f"p{k}"] = unit(base[k] + 0.9 * unit(rng.normal(size=384)))
        features[f"n{k}"] = unit(base[k] + 0.5 * unit(rng.normal(size=384)))
    for k in range(8):
        rows.append(Triplet(f"a{k}", f"p{k}", f"n{k}", f"intent{k}"))
    cfg = TrainSettings(projection_batch=8, projection_lr=1e-2)

    def gap(vectors):
        return np.mean([vectors[f"a{k}"] @ vectors[f"p{k}"] - vectors[f"a{k}"] @ vectors[f"n{k}"] for k in range(8)])
    before = gap(features)
    assert before < 0             # plain cosine prefers the hard negative
    head = train_head("linear", rows * 8, features, cfg, epochs=20, symmetric=symmetric)
    assert gap(tuned_vectors(head, features, sorted(features))) > before + 0.3


def test_replay_retrieves_by_plain_cosine_and_judges_by_the_carried_vectors():
    cache = [("how do I open a savings account", "open"), ("what name is on my savings account", "name")]
    question = "what do I need to open a savings account"
    plain = {cache[0][0]: unit(np.array([1.0, 0.0, 0.0])), cache[1][0]: unit(np.array([0.0, 1.0, 0.0])),
             question: unit(np.array([0.6, 0.8, 0.0]))}                   # plain: closer to "name"
    carried = {cache[0][0]: unit(np.array([1.0, 0.0, 0.0])), cache[1][0]: unit(np.array([0.0, 1.0, 0.0])),
               question: unit(np.array([0.99, 0.1, 0.0]))}                # the head: "open", clearly
    policy = fitting.provisional(np.eye(3, dtype=np.float32), TrainSettings())
    plainly = simulate.replay("plain", policy, cache, [(question, "open")], plain, top_k=2)
    tuned = simulate.replay("tuned", policy, cache, [(question, "open")], plain, top_k=2, carried=carried)
    assert plainly.entry == [cache[1][0]] and not plainly.right[0]
    assert tuned.entry == [cache[0][0]] and tuned.right[0]
    assert tuned.margin[0] == pytest.approx(float(carried[question] @ carried[cache[0][0]]
                                                  - carried[question] @ carried[cache[1][0]]), abs=1e-5)
    only_one = simulate.replay("one", policy, cache, [(question, "open")], plain, top_k=1, carried=carried)
    assert only_one.entry == [cache[1][0]]        # the head only re-judges what plain retrieval fetched


def figures(served: float, wrong: float) -> dict:
    return {"served_rate": served, "false_hit_rate": wrong}


def test_the_report_has_a_row_per_head_and_target_and_draws_them(tmp_path):
    results = [{"head": h, **{t: {"cut": {}, "unseen": figures(0.35, 0.017), "out_of_scope": figures(0.01, 1.0),
                                  "test_in_scope": figures(0.57, 0.015), "test_with_oos": figures(0.47, 0.02)}
                              for t in ("0.01", "0.02")}} for h in ("linear", "mlp")]
    text = table(results)
    assert len(text.splitlines()) == 2 + 4
    assert "| mlp | 0.02 | 35.0%, 1.70% | 1.0% | 57.0%, 1.50% | 47.0%, 2.00% |" in text
    plot(results, tmp_path / "heads.png")
    assert (tmp_path / "heads.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_recipe_names_how_the_head_is_trained():
    from loadtests.matcher_heads import Recipe
    assert Recipe.parse("mlp") == ("mlp", Recipe())
    kind, recipe = Recipe.parse("linear@scale30+symmetric+batch512+lr0.002")
    assert kind == "linear" and recipe.scale == 30.0 and recipe.symmetric and not recipe.remine
    cfg = recipe.applied(TrainSettings())
    assert cfg.projection_batch == 512 and cfg.projection_lr == 0.002 and cfg.projection_epochs == 5.0
    with pytest.raises(SystemExit):
        Recipe.parse("linear@warp9")


def test_remined_negatives_are_the_trained_heads_nearest_other_intent():
    from loadtests.matcher_heads import remined
    e = np.eye(4, dtype=np.float32)
    features = {"a": e[0], "a2": unit(e[0] + 0.1 * e[3]), "b": unit(e[0] + e[1]), "c": unit(e[2] + 0.2 * e[0])}
    rows = [("a", "one"), ("a2", "one"), ("b", "two"), ("c", "three")]
    head = head_module("linear", 4, dim=4)
    found = {t.anchor: t for t in remined(head, rows, features, features, TrainSettings())}
    assert set(found) == {"a", "a2"}                        # only intents with a paraphrase get a triplet
    assert found["a"].positive == "a2" and found["a"].negative in {"b", "c"} and found["a"].group == "one"
