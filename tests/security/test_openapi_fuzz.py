"""Schemathesis fuzzes the live gateway from its own OpenAPI description: over 500 generated requests,
no 5xx and no response that breaks the documented schema, status codes, content types or headers, and
schema-invalid requests rejected.

One default check is left out: `positive_data_acceptance` (schema-valid requests must get a 2xx). Some
rules cannot be written in JSON Schema, so a schema-valid request may still get a documented 400: a
conversation longer than the model's context, prompt size summed over messages, a tool message without
content, the model's own chat-template rules."""
from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import checks

from cachegate.api.app import create_app
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.slow
EXAMPLES = {"POST": 250, "GET": 10}       # two POST operations: > 500 requests in all


@pytest.fixture(scope="module")
def gateway():
    settings = make_settings(limits={"max_prompt_chars": 20_000}, cache={"semantic": {"policy": "cosine"}})
    with LiveServer(create_app(settings, backends={"echo": EchoBackend(max_context=100_000)})) as server:
        yield server


def fuzz(operation, base_url: str, calls: list[int]) -> None:
    @settings(max_examples=EXAMPLES[operation.method.upper()], deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck), database=None)
    @given(case=operation.as_strategy())
    def run(case):
        response = case.call_and_validate(base_url=base_url, timeout=30,
                                          excluded_checks=[checks.positive_data_acceptance])
        calls.append(response.status_code)
    run()


def test_gateway_honours_its_openapi_description(gateway):
    schema = schemathesis.openapi.from_url(gateway.url + "/openapi.json")
    calls: list[int] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {op.path for op in operations} >= {"/v1/chat/completions", "/v1/completions", "/v1/models"}
    for operation in operations:
        fuzz(operation, gateway.url, calls)
    assert len(calls) >= 500, f"only {len(calls)} generated requests ran"
    assert all(code < 500 for code in calls)
    assert 200 in calls and any(400 <= code < 500 for code in calls)
