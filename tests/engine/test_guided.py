"""Constrained decoding on the real model: answers follow their schema at every budget (cut short ones
too, then with finish_reason "length"), grammars compile once, a mixed batch leaves free requests as they
were, grammar state survives preemption (dropped, then replayed) and is dropped on abort and finish;
bad schemas and budgets too small for a complete answer are refused before any work.
"""
from __future__ import annotations

import json

import jsonschema
import pytest

from engine.errors import RequestValidationError
from engine.guided.spec import GuideSpec
from engine.sampling_params import SamplingParams
from engine.sequence import Sequence
from tests.engine.conftest import engine_for

pytestmark = pytest.mark.slow
PERSON = {"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 24}, "age": {"type": "integer", "minimum": 0},
    "city": {"type": "string", "enum": ["Paris", "Oslo", "Lima"]},
    "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
    "required": ["name", "age", "city", "tags"], "additionalProperties": False}
ASK = "Describe a person named Ann, 31, from Oslo, as JSON with name, age, city and tags."


def prompt(tokenizer, text: str = ASK) -> list[int]:
    return tokenizer.apply_chat_template([{"role": "user", "content": text}])


def valid(text: str, schema: dict) -> bool:
    jsonschema.validate(json.loads(text), schema)
    return True


@pytest.fixture(scope="module")
def engine(checkpoint):
    return engine_for(checkpoint, num_kv_blocks=128)


def test_answers_validate_at_every_budget_and_cut_ones_say_length(engine, tokenizer):
    spec = GuideSpec.json_schema(PERSON)
    shortest = engine.guides.compile(spec).min_tokens
    budgets = [shortest, shortest + 1, shortest + 4, shortest + 9, 60]
    params = [SamplingParams(max_tokens=n, temperature=0) for n in budgets] + \
             [SamplingParams(max_tokens=n, temperature=1.0, seed=s) for s, n in enumerate(budgets)]
    outs = engine.generate_many([prompt(tokenizer)] * len(params), params, guides=[spec] * len(params))
    for out, sp in zip(outs, params):
        assert valid(out.text, PERSON), out.text
        assert out.completion_tokens <= sp.max_tokens
    assert outs[0].finish_reason == "length"           # the shortest budget always cuts the model short
    assert {o.finish_reason for o in outs} <= {"stop", "length"}
    assert engine.check_integrity().in_use == 0


def test_json_object_is_any_object(engine, tokenizer):
    out = engine.generate(prompt(tokenizer, "Give me a JSON object about a cat."),
                          SamplingParams(max_tokens=24, temperature=0.8, seed=3), guide=GuideSpec.json_object())
    assert isinstance(json.loads(out.text), dict)


def test_a_grammar_compiles_once_then_comes_from_the_cache(checkpoint):
    fresh = engine_for(checkpoint, num_kv_blocks=16)
    spec = GuideSpec.json_schema({"type": "object", "properties": {"x": {"type": "boolean"}}, "required": ["x"]})
    first, again = fresh.guides.compile(spec), fresh.guides.compile(GuideSpec(spec.kind, spec.source))
    assert first is again
    assert (fresh.guides.stats.compiled, fresh.guides.stats.cache_hits) == (1, 1)


def test_mixed_batch_gives_each_request_its_own_output(engine, tokenizer):
    free = [prompt(tokenizer, q) for q in ("Name a color.", "What is 2+2?", "Say hello.")]
    params = SamplingParams(max_tokens=12, temperature=0, ignore_eos=True)
    alone = [engine.generate(p, params).token_ids for p in free]
    spec = GuideSpec.json_schema(PERSON)
    json_params = SamplingParams(max_tokens=40, temperature=0)
    outs = engine.generate_many([free[0], prompt(tokenizer), free[1], prompt(tokenizer), free[2]],
                                [params, json_params, params, json_params, params],
                                guides=[None, spec, None, GuideSpec.json_object(), None])
    assert [outs[i].token_ids for i in (0, 2, 4)] == alone          # masks touch only their own rows
    assert valid(outs[1].text, PERSON) and isinstance(json.loads(outs[3].text), dict)
    assert engine.masker.stats.rows > 0


def test_grammar_state_is_dropped_on_preemption_and_replayed(checkpoint, engine, tokenizer):
    spec = GuideSpec.json_schema(PERSON)
    params = SamplingParams(max_tokens=48, temperature=0)
    prompts = [prompt(tokenizer, f"{ASK} Person number {i}.") for i in range(4)]
    want = [engine.generate(p, params, guide=spec).token_ids for p in prompts]
    tight = engine_for(checkpoint, num_kv_blocks=14)
    seqs = [Sequence(p, params, guide=tight.guide_state(spec, params)) for p in prompts]
    finished = {}
    for seq in seqs:
        tight.add_request(seq)
    while len(finished) < len(seqs):
        for out in tight.step():
            if out.finished:
                finished[out.seq_id] = out
    assert tight.stats()["preemptions"] > 0
    assert sum(s.guide.num_replays for s in seqs) > 0
    assert [s.output_token_ids for s in seqs] == want
    assert all(s.guide.matcher is None for s in seqs)               # dropped on finish
    assert tight.check_integrity().in_use == 0


def test_abort_drops_the_matcher_and_frees_the_blocks(engine, tokenizer):
    seq = Sequence(prompt(tokenizer), SamplingParams(max_tokens=40, temperature=0),
                   guide=engine.guide_state(GuideSpec.json_schema(PERSON), SamplingParams(max_tokens=40)))
    stream = engine.stream(seq)
    next(stream), next(stream)
    assert seq.guide.matcher is not None
    stream.close()
    assert seq.guide.matcher is None and engine.check_integrity().in_use == 0


@pytest.mark.parametrize("schema, words", [
    ({"type": 3}, "invalid"),
    ({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}, "cannot be compiled"),
    ({"type": "array", "items": {"type": "integer"}, "uniqueItems": True}, "uniqueItems"),
    ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, "oneOf"),
])
def test_bad_or_unenforceable_schemas_are_refused(engine, schema, words):
    with pytest.raises(RequestValidationError, match=words):
        engine.guide_state(GuideSpec.json_schema(schema), SamplingParams(max_tokens=50))


def test_a_budget_too_small_for_any_complete_answer_is_refused(engine):
    with pytest.raises(RequestValidationError, match="too small"):
        engine.guide_state(GuideSpec.json_schema(PERSON), SamplingParams(max_tokens=5))


def test_every_prefix_of_an_answer_closes_to_a_valid_one(engine, tokenizer):
    """The closing search from any point (even inside a string, a number or a key) ends in valid JSON."""
    import xgrammar as xgr

    from engine.guided.closer import closing_tokens
    compiled = engine.guides.compile(GuideSpec.json_schema(PERSON))
    document = json.dumps({"name": "Ann", "age": 31, "city": "Oslo", "tags": ["x \"y\" \\", "-1.5e3"]})
    for cut in range(len(document) + 1):
        matcher = xgr.GrammarMatcher(compiled.grammar)
        assert matcher.accept_string(document[:cut])
        plan = closing_tokens(matcher, 64, compiled.vocab)
        assert plan is not None, document[:cut]
        assert valid(document[:cut] + tokenizer.decode(plan), PERSON)
