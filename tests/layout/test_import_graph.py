"""The house plan holds: no circle among the packages and folders (nor among modules), and the gateway never
imports its load tests (they register their verbs through an entry point)."""
from __future__ import annotations

import pytest

from tests.layout.imports import cycles, folder_graph, graph


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_no_circle_among_folders(depth):
    assert cycles(folder_graph(depth)) == []


def test_no_circle_among_modules():
    assert cycles(graph()) == []


def test_the_gateway_does_not_import_the_load_tests():
    reads = {(a, b) for a, targets in graph().items() for b in targets
             if a.startswith("cachegate") and b.startswith("loadtests")}
    assert reads == set()


def test_the_backend_contract_does_not_speak_the_engine():
    engine_readers = {a for a, targets in graph().items() if a.startswith("cachegate")
                      and any(b.startswith("engine") for b in targets)}
    # only the in-process backend (and the structure it asks the engine for) and the distillation tools, which
    # train and run the small model, reach into the engine
    runs_engine = {"cachegate.backends.inprocess", "cachegate.backends.structured"}
    assert {a for a in engine_readers - runs_engine
            if not a.startswith(("cachegate.distill", "cachegate.commands.distill"))} == set()
    assert "cachegate.backends.base" not in engine_readers


def test_the_pipeline_meters_nothing():
    assert not {b for b in graph()["cachegate.pipeline"] if b.startswith("cachegate.telemetry")}


def test_cycles_are_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
