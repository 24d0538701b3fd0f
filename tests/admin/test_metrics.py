"""`/metrics` scrapes cleanly with Prometheus' own parser, and its numbers follow the traffic."""
from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from tests.admin.conftest import traffic


def scrape(client) -> dict[str, list]:
    r = client.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    return {f.name: f.samples for f in text_string_to_metric_families(r.text)}


def value(samples, name: str, **labels) -> float:
    return sum(s.value for s in samples if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()))


def test_metrics_follow_the_traffic(client):
    seen = traffic(client)
    m = scrape(client)
    requests = m["cachegate_requests"]
    for outcome in ("hit-exact", "hit-semantic", "miss"):
        assert value(requests, "cachegate_requests_total", cache=outcome, status="200") == seen[outcome]
    assert value(requests, "cachegate_requests_total", status="400") == 1
    answered = sum(seen.values()) - seen["error"]
    hits = seen["hit-exact"] + seen["hit-semantic"]
    assert value(m["cachegate_hit_ratio"], "cachegate_hit_ratio", tier="any") == round(hits / answered, 4)
    assert value(m["cachegate_request_duration_seconds"], "cachegate_request_duration_seconds_count") == answered
    assert value(m["cachegate_time_to_first_token_seconds"], "cachegate_time_to_first_token_seconds_count") == answered
    assert value(m["cachegate_tokens"], "cachegate_tokens_total", kind="saved") > 0
    assert value(m["cachegate_cost"], "cachegate_cost_total", kind="saved") > 0
    assert value(m["cachegate_store_up"], "cachegate_store_up", store="exact") == 1
    assert value(m["cachegate_store_entries"], "cachegate_store_entries", store="exact") == seen["miss"]
    assert value(m["cachegate_backend_up"], "cachegate_backend_up", model="echo") == 1
    assert value(m["cachegate_routes"], "cachegate_routes_total", tier="small") == seen["miss"]
    if seen["hit-semantic"]:
        assert value(m["cachegate_semantic_hit_similarity"], "cachegate_semantic_hit_similarity_count") == \
            seen["hit-semantic"]


def test_every_family_has_help_and_a_type(client):
    traffic(client)
    for family in text_string_to_metric_families(client.get("/metrics").text):
        assert family.documentation and family.type in ("counter", "gauge", "histogram")
