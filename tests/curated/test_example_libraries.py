"""The example libraries in loadtests/libraries are what their generator writes from the workloads, load
as curated answers, and their ids are the workloads' labels (so a load test can judge a curated hit)."""
from __future__ import annotations

import json

from cachegate.cache.curated.records import read_file
from loadtests.libraries import HERE, code_completion, customer_service
from loadtests.loadgen.falsehits import judge
from loadtests.loadgen.result import Result
from loadtests.workloads.code_completion import CodeCompletion
from loadtests.workloads.customer_service import CustomerService


def test_the_files_are_the_generators_output_and_load():
    for name, records in (("customer-service", customer_service()), ("code-completion", code_completion())):
        lines = (HERE / f"{name}.jsonl").read_text().splitlines()
        assert [json.loads(line) for line in lines] == records and len(records) >= 20
        assert [a.id for a in read_file(HERE / f"{name}.jsonl")] == [r["id"] for r in records]


def test_ids_are_workload_labels():
    intents = {i.id for i in CustomerService(seed=0).intents}
    prompts = {label for label, _, _ in CodeCompletion(seed=0).pool}
    assert {r["id"] for r in customer_service()} <= intents
    assert {r["id"] for r in code_completion()} <= prompts


def test_a_curated_hit_is_judged_by_its_answer_id():
    right = Result("billing.pay.invoice", 0.0, "hit-curated", 1.0, text="x", entry="billing.pay.invoice")
    wrong = Result("billing.pay.invoice", 0.0, "hit-curated", 1.0, text="x", entry="shipping.track.order")
    verdicts = judge([right, wrong])
    assert (verdicts.correct, verdicts.false) == (1, 1)
