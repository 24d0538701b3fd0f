"""The router knows about tools and response schemas: they add to a request's score (the tool list to its
prompt length too) without deciding the tier on their own."""
from __future__ import annotations

from cachegate.backends.base import BackendRequest, Sampling
from cachegate.routing.router import route_input
from policies.routing import LARGE, SMALL, ComplexityRouter, RouteInput

router = ComplexityRouter()
TOOL = {"type": "function", "function": {"name": "lookup", "description": "Look a word up " * 40,
                                         "parameters": {"type": "object", "properties": {"w": {"type": "string"}}}}}


def chat(text: str, **kw) -> RouteInput:
    return RouteInput(kind="chat", text=text, prompt_tokens=len(text) // 4, **kw)


def test_a_simple_question_with_a_schema_or_tools_still_goes_small():
    for kw in ({"has_schema": True}, {"has_tools": True}):
        decision = router.route(chat("What is the capital of France?", **kw))
        assert decision.tier == SMALL and decision.reasons == (("schema",) if "has_schema" in kw else ("tools",))


def test_a_schema_adds_to_a_demanding_request():
    text = "Summarize this order for me."
    plain = router.route(RouteInput(kind="chat", text=text, prompt_tokens=300))
    structured = router.route(RouteInput(kind="chat", text=text, prompt_tokens=300, has_schema=True, has_tools=True))
    assert structured.score > plain.score and structured.tier == LARGE and plain.tier == SMALL


def test_route_input_sees_the_schema_and_counts_the_tools_in_the_prompt():
    def request(**kw) -> BackendRequest:
        return BackendRequest(model="auto", params=Sampling(), messages=[{"role": "user", "content": "hi"}],
                              **kw)
    plain = route_input("chat", request())
    shaped = route_input("chat", request(tools=[TOOL], extra={"response_format": {"type": "json_object"}}))
    assert (plain.has_schema, shaped.has_schema, shaped.has_tools) == (False, True, True)
    assert shaped.prompt_tokens > plain.prompt_tokens + 100
    assert not route_input("chat", request(extra={"response_format": {"type": "text"}})).has_schema
