"""The learned router: trains on labeled examples, beats the length-only baseline on held-out rows,
round-trips through its file, and routes `auto` requests in the gateway."""
from __future__ import annotations

import json

import numpy as np
import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from cachegate.commands.main import main
from cachegate.commands.router import compare, dedupe, inputs, labels, length_threshold, split
from loadtests.router_examples import generate
from policies.learned_router import LearnedRouter, features, fit
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend

pytestmark = pytest.mark.slow
EMBEDDER = "packaged:all-minilm-l6-v2"


@pytest.fixture(scope="module")
def trained():
    rows = dedupe(generate(240, seed=3))
    train_rows, held_rows = split(rows, 0.3, seed=0)
    train_in, held_in = inputs(train_rows, EMBEDDER), inputs(held_rows, EMBEDDER)
    router = fit(np.stack([features(r) for r in train_in]), labels(train_rows), embedding_model=EMBEDDER)
    return router, train_in, labels(train_rows), held_in, labels(held_rows)


def test_learned_router_beats_the_length_only_baseline_on_held_out_rows(trained):
    router, train_in, y_train, held_in, y_held = trained
    report = compare(held_in, y_held, router, length_threshold(train_in, y_train))
    assert report["learned"]["accuracy"] > report["length_only"]["accuracy"]
    assert report["learned"]["accuracy"] >= 0.9
    assert 0.2 < report["learned"]["large_share"] < 0.8


def test_file_form_round_trips(trained, tmp_path):
    router, _, _, held_in, _ = trained
    again = LearnedRouter.from_dict(json.loads(json.dumps(router.to_dict())))
    assert [again.route(r).tier for r in held_in] == [router.route(r).tier for r in held_in]
    with pytest.raises(ValueError):
        LearnedRouter.from_dict({"kind": "cosine"})


def test_gateway_routes_auto_with_the_learned_policy(trained, tmp_path):
    path = tmp_path / "router.json"
    path.write_text(json.dumps(trained[0].to_dict()))
    small, large = EchoBackend("s", tier="small"), EchoBackend("l", tier="large")
    settings = make_settings(models=[{"name": "s", "tier": "small"}, {"name": "l", "tier": "large"}],
                             routing={"policy": "learned", "learned_path": str(path)},
                             cache={"semantic": {"enabled": False}})
    with TestClient(create_app(settings, backends={"s": small, "l": large})) as client:
        def route_of(text):
            body = {"model": "auto", "messages": [{"role": "user", "content": text}]}
            return client.post("/v1/chat/completions", json=body).headers["x-cachegate-route"]
        assert route_of("What currency does Japan use?") == "auto:small:s"
        assert route_of("Show rigorously that there are infinitely many primes.") == "auto:large:l"


def test_router_train_and_eval_commands(tmp_path, capsys):
    data = tmp_path / "examples.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in generate(80, seed=5)))
    model = tmp_path / "router.json"
    assert main(["router", "train", str(data), "--model", str(model), "--json"]) == 0
    trained = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert model.exists() and trained["held_out"] > 0
    assert main(["router", "eval", str(data), "--model", str(model), "--json"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    for name in ("learned", "complexity", "length_only"):
        assert set(report[name]) == {"accuracy", "large_share", "confusion"}
        assert sum(report[name]["confusion"].values()) == report["examples"]
