"""LangChain against a live gateway and the real engine: `bind_tools` gets a tool call it can run, and
`with_structured_output(method="json_schema")` gets an instance of its pydantic model."""
from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from tests.e2e.conftest import MODEL

pytestmark = pytest.mark.slow
langchain_openai = pytest.importorskip("langchain_openai")


class City(BaseModel):
    """A city and the country it lies in."""
    city: str = Field(description="the city's name", max_length=40)      # bounded: the answer always
    country: str = Field(description="the country's name", max_length=40)  # ends before max_tokens


def get_weather(city: str, unit: str) -> str:
    """Current weather in a city, in celsius or fahrenheit."""
    return f"21 degrees {unit} in {city}"


@pytest.fixture
def llm(live_gateway):
    return langchain_openai.ChatOpenAI(base_url=live_gateway.url + "/v1", api_key="unused", model=MODEL,
                                       temperature=0, max_tokens=60, max_retries=0, timeout=120)


def test_bind_tools_gets_a_tool_call_it_can_run(llm):
    reply = llm.bind_tools([get_weather], tool_choice="get_weather").invoke("What is the weather in Paris?")
    assert len(reply.tool_calls) == 1
    call = reply.tool_calls[0]
    assert call["name"] == "get_weather" and call["id"].startswith("call_")
    assert set(call["args"]) == {"city", "unit"}
    assert get_weather(**call["args"])


def test_with_structured_output_json_schema_returns_the_model(llm):
    structured = llm.model_copy(update={"max_tokens": 120}).with_structured_output(City, method="json_schema")
    answer = structured.invoke("Which city is the Eiffel Tower in?")
    assert isinstance(answer, City) and answer.city
