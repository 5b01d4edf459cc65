"""Structured output and scripted replies: JSON extraction, schema validation, schema instances."""
from __future__ import annotations

import asyncio

import jsonschema
import numpy as np
import pytest

from pvsst.core.errors import InputError
from pvsst.sim.llm.gateway import Gateway, call_id_for
from pvsst.sim.llm.pacing import RatePacer
from pvsst.sim.llm.providers.embedded import grammar_schema
from pvsst.sim.llm.providers.scripted import EchoProvider, schema_instance
from pvsst.sim.llm.structured import check_schema, extract_json, parse_reply
from pvsst.sim.llm.types import LLMRequest

POST = {"type": "object", "properties": {
    "post": {"type": "string", "minLength": 1, "maxLength": 180},
    "opinion": {"type": "string", "enum": ["strongly support", "neutral", "oppose"]},
    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    "reason": {"type": "string", "maxLength": 200}},
    "required": ["post", "opinion", "confidence", "reason"], "additionalProperties": False}
VOTES = {"type": "object", "properties": {"votes": {"type": "array", "items": {"type": "integer", "enum": [-1, 0, 1]},
                                                    "minItems": 5, "maxItems": 5}},
         "required": ["votes"], "additionalProperties": False}
MIXED = {"type": "object", "properties": {
    "flag": {"type": "boolean"}, "count": {"type": "integer", "minimum": 3, "maximum": 9},
    "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.5},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 4}, "minItems": 1, "maxItems": 3},
    "kind": {"const": "x"}, "maybe": {"type": ["null", "string"], "minLength": 12},
    "choice": {"anyOf": [{"type": "integer", "minimum": -2, "maximum": -1}, {"type": "string"}]}},
    "required": ["flag", "count", "ratio", "tags", "kind", "maybe", "choice"]}


@pytest.mark.parametrize("text, value", [
    ('{"a": 1}', {"a": 1}),
    ('  [1, 2] ', [1, 2]),
    ('Sure!\n```json\n{"a": {"b": "}"}}\n```\nanything else', {"a": {"b": "}"}}),
    ('The answer is {"a": 2} and then {"a": 3}', {"a": 2}),
    ('noise { not json } then {"ok": true}', {"ok": True}),
])
def test_extract_json(text, value):
    assert extract_json(text) == value


def test_extract_json_without_json_raises():
    with pytest.raises(ValueError):
        extract_json("no braces at all")


def test_parse_reply_statuses():
    assert parse_reply('{"votes": [1, 0, -1, 0, 1]}', VOTES) == ({"votes": [1, 0, -1, 0, 1]}, "ok", "")
    parsed, status, problem = parse_reply('{"votes": [1, 0]}', VOTES)
    assert (parsed, status) == (None, "parse_error") and "too short" in problem
    assert parse_reply("   ", VOTES)[1] == "empty"
    assert parse_reply(None, None)[1] == "empty"
    assert parse_reply("free text", None) == (None, "ok", "")


def test_check_schema_rejects_bad_schemas():
    check_schema(POST)
    with pytest.raises(InputError, match="invalid JSON schema"):
        check_schema({"type": "object", "properties": {"a": {"type": 5}}})
    with pytest.raises(InputError, match="must be a JSON object"):
        check_schema(["not", "a", "schema"])


@pytest.mark.parametrize("schema", [POST, VOTES, MIXED], ids=["post", "votes", "mixed"])
def test_schema_instances_are_valid_for_many_seeds(schema):
    validator = jsonschema.Draft202012Validator(schema)
    for seed in range(300):
        value = schema_instance(schema, np.random.default_rng(seed), "labels build trust online".split())
        errors = list(validator.iter_errors(value))
        assert not errors, (seed, value, errors[0].message)


def test_echo_is_a_pure_function_of_request_and_seed():
    def reply(seed):
        request = LLMRequest(model_name="scripted/echo", messages=({"role": "user", "content": "labels build trust"},),
                             schema=POST, seed=seed)
        return EchoProvider().reply(request).text
    assert reply(1) == reply(1)
    assert len({reply(seed) for seed in range(20)}) > 10  # the seed matters


def test_schema_retry_uses_next_seed_and_call_id_ignores_nothing():
    request = LLMRequest(model_name="scripted/echo", messages=({"role": "user", "content": "a b"},), seed=41,
                         trial_id="t", round=1, agent_id="a01", phase="post")
    same = LLMRequest(**{**request.__dict__})
    other_tags = LLMRequest(**{**request.__dict__, "agent_id": "a02"})
    assert call_id_for(request) == call_id_for(same) != call_id_for(other_tags)
    assert request.cache_key() == other_tags.cache_key()  # tags label provenance, not the reply
    # No string has length >= 1 and <= 0: every attempt fails validation, each with the next seed.
    impossible = LLMRequest(model_name="scripted/echo", messages=request.messages, seed=41,
                            schema={"type": "string", "maxLength": 0, "minLength": 1})
    with Gateway(max_attempts=4) as gateway:
        result = gateway.run([impossible])[0]
    assert (result.record.status, result.record.attempts, result.extra["seeds"]) == ("parse_error", 4, [41, 42, 43, 44])
    assert result.record.request_seed == 41


def test_grammar_schema_turns_ranges_into_enums():
    rewritten = grammar_schema(POST)
    assert rewritten["properties"]["confidence"]["enum"] == [round(i / 100, 2) for i in range(101)]
    assert rewritten["properties"]["post"] == POST["properties"]["post"]
    assert grammar_schema({"type": "integer", "minimum": 1, "maximum": 5}) == {"enum": [1, 2, 3, 4, 5]}
    wide = {"type": "integer", "minimum": 0, "maximum": 10_000}
    assert grammar_schema(wide) == wide  # too many values to list: left to validation


def test_pacer_spaces_starts():
    pacer = RatePacer(requests_per_minute=1200)  # one start per 50 ms

    async def starts():
        loop = asyncio.get_running_loop()
        times = []
        for _ in range(5):
            await pacer.acquire()
            times.append(loop.time())
        return times

    times = asyncio.run(starts())
    assert times[-1] - times[0] >= 4 * 0.05 - 0.01


def test_free_strings_get_a_bound_that_fits_the_token_limit():
    """Every free string of a grammar schema is bounded, so the whole reply fits in the token limit."""
    import math
    import re

    from pvsst.sim.llm.providers.grammar import DECODER_MARGIN, bound_free_strings, worst_case_chars

    schema = {"type": "object", "properties": {
        "post": {"type": "string", "minLength": 1}, "reason": {"type": "string"},
        "opinion": {"type": "string", "enum": ["support", "neutral", "oppose"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1}},
        "required": ["post", "opinion"], "additionalProperties": False}
    for max_tokens in (120, 200, 400):
        bounded = bound_free_strings(grammar_schema(schema), max_tokens)
        post, reason = bounded["properties"]["post"], bounded["properties"]["reason"]
        assert post["maxLength"] == reason["maxLength"] > 0
        assert worst_case_chars(bounded) + DECODER_MARGIN <= max_tokens < worst_case_chars(bounded) + DECODER_MARGIN + 2
        assert re.fullmatch(post["pattern"], "Labels [help]!") and not re.fullmatch(post["pattern"], 'say "hi"')
        assert not re.fullmatch(post["pattern"], "line\nbreak") and not re.fullmatch(post["pattern"], "")  # minLength 1
    # Explicit bounds stay as the schema sets them, decoded from the same printable characters (no emoji
    # of several tokens each); an unbounded part leaves the schema as it is.
    explicit = bound_free_strings({"type": "string", "minLength": 1, "maxLength": 500}, 60)
    assert explicit["maxLength"] == 500 and explicit["minLength"] == 1
    assert (re.fullmatch(explicit["pattern"], "Labels [help]!")
            and not re.fullmatch(explicit["pattern"], "labels \U0001F331"))
    assert not re.fullmatch(explicit["pattern"], "x" * 501) and not re.fullmatch(explicit["pattern"], "")
    unbounded = {"type": "array", "items": {"type": "string"}}
    assert worst_case_chars(unbounded) == math.inf and bound_free_strings(unbounded, 60) == unbounded
