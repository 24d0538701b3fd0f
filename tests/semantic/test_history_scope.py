"""A follow-up is answered only from its own conversation: every earlier turn counts, however long the
history. By default (`history: exact`) two conversations that differ anywhere never share an entry;
with `history: window` the embedded turns are compared by similarity and the older ones exactly."""
from __future__ import annotations

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cachegate.backends.base import BackendRequest, Sampling, Usage
from cachegate.cache.answer import CachedAnswer
from cachegate.cache.semantic.context import history_digest, probe_of
from tests.semantic.conftest import ask, semantic_app


def alice_bob(name: str, filler_turns: int = 0) -> list[dict]:
    turns = [{"role": "user", "content": f"My name is {name}."}, {"role": "assistant", "content": "Nice to meet you."}]
    for i in range(filler_turns):
        turns += [{"role": "user", "content": f"Tell me fact {i}."}, {"role": "assistant", "content": f"Fact {i}."}]
    return turns + [{"role": "user", "content": "Thanks"}, {"role": "assistant", "content": "You're welcome."}]


def test_the_same_follow_up_in_another_conversation_misses(client, backend):
    first = ask(client, "What is my name?", history=alice_bob("Alice"))
    other = ask(client, "What is my name?", history=alice_bob("Bob"))
    same = ask(client, "What is my name ?", history=alice_bob("Alice"))
    assert first.headers["x-cachegate-cache"] == "miss"
    assert other.headers["x-cachegate-cache"] == "miss"
    assert same.headers["x-cachegate-cache"] == "hit-semantic"


def test_in_window_mode_turns_older_than_the_window_must_match_exactly(backend):
    with TestClient(semantic_app(backend, history="window", context_turns=1)) as client:
        ask(client, "What is my name?", history=alice_bob("Alice", filler_turns=2))
        other = ask(client, "What is my name ?", history=alice_bob("Bob", filler_turns=2))
        same = ask(client, "What is my name ?", history=alice_bob("Alice", filler_turns=2))
    assert other.headers["x-cachegate-cache"] == "miss"
    assert same.headers["x-cachegate-cache"] == "hit-semantic"


def test_history_digests_ignore_only_whitespace():
    a = [{"role": "user", "content": "My name is  Alice.\n"}]
    assert history_digest(a) == history_digest([{"role": "user", "content": "My name is Alice."}])
    assert history_digest(a) != history_digest([{"role": "user", "content": "My name is Alicia."}])
    assert history_digest(a) != history_digest([{"role": "assistant", "content": "My name is Alice."}])


def test_window_probes_put_the_older_turns_and_any_cut_text_into_the_digest():
    def probe(history, chars=1500):
        request = BackendRequest("m", Sampling(), messages=history + [{"role": "user", "content": "And?"}])
        return probe_of(request, context_turns=1, max_context_chars=chars, history="window")
    short = probe(alice_bob("Alice"))
    assert short.context.startswith("user: Thanks") and short.history == history_digest(alice_bob("Alice")[:2])
    cut = probe(alice_bob("Alice"), chars=10)
    assert cut.history == history_digest(alice_bob("Alice"))


WORDS = st.sampled_from(["my name is Alice", "my name is Bob", "thanks", "ok", "I live in Paris",
                         "I live in Rome", "tell me more", "  thanks "])
TURNS = st.lists(st.tuples(WORDS, WORDS), min_size=0, max_size=4)


def conversation(turns: list[tuple[str, str]]) -> list[dict]:
    return [m for user, reply in turns for m in ({"role": "user", "content": user},
                                                 {"role": "assistant", "content": reply})]


def normalized(messages: list[dict]) -> list[tuple[str, str]]:
    return [(m["role"], " ".join(m["content"].split())) for m in messages]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stored=st.lists(TURNS, min_size=1, max_size=4), asked=TURNS)
def test_a_semantic_hit_only_comes_from_an_entry_with_an_equivalent_history(client, tier, stored, asked):
    """Store the same follow-up under several random histories, ask it under another: whatever is served
    was stored under a history equal to the asker's, turn by turn (whitespace aside)."""
    question = "What did I just tell you?"

    def request(turns):
        return BackendRequest("echo", Sampling(),
                              messages=conversation(turns) + [{"role": "user", "content": question}])

    async def run():
        for turns in stored:
            lookup = await tier.prepare("chat", request(turns), "default")
            answer = repr(normalized(conversation(turns)))
            await tier.put(lookup, CachedAnswer(answer, "stop", "echo", Usage()))
        found = await tier.lookup("chat", request(asked))
        await tier.delete(list(tier.catalog.meta))
        return found.hit.entry.answer.text if found and found.hit else None

    served = client.portal.call(run)
    if served is not None:
        assert served == repr(normalized(conversation(asked)))
