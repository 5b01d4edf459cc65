"""Grammar-constrained decoding always closes, so a small local model's reply is never cut inside a string.

A schema with a free-text string (no ``maxLength``) and an enum, 20 different prompts through
``embedded/smollm2-135m`` at the default token limit (``LLMRequest.max_tokens``, 120, also the
``pvsst llm complete`` default): every reply is complete JSON valid under the schema. Without a bound on
the free string a reply can run out of tokens inside it (``parse_error: no JSON value in the reply``).
"""
from __future__ import annotations

import jsonschema
import pytest

from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.llm.types import LLMRequest

pytestmark = [pytest.mark.embedded, pytest.mark.slow]

SCHEMA = {"type": "object", "properties": {
    "post": {"type": "string"},
    "stance": {"type": "string", "enum": ["support", "neutral", "oppose"]}},
    "required": ["post", "stance"], "additionalProperties": False}

TOPICS = ["should AI content be labeled", "should platforms verify user identity",
          "should feeds be chronological by default", "should political ads be targeted",
          "should cities ban cars downtown", "should schools start later", "should homework be abolished",
          "should voting be compulsory", "should tipping be replaced by higher wages",
          "should nuclear power be expanded", "should remote work be a right", "should zoos be closed",
          "should college be free", "should daylight saving time end", "should plastic bags be banned",
          "should the voting age be 16", "should social media require age checks",
          "should meat be taxed", "should public transit be free", "should phones be banned in class"]


def test_twenty_free_text_prompts_all_close_under_the_default_token_limit():
    assert len(set(TOPICS)) == 20
    requests = [LLMRequest(model_name="embedded/smollm2-135m", schema=SCHEMA, seed=100 + i, temperature=0.8,
                           messages=({"role": "user", "content": f"Topic: {topic}? Write a post and give "
                                                                 "your stance."},))
                for i, topic in enumerate(TOPICS)]
    assert {r.max_tokens for r in requests} == {120}
    with Gateway(max_attempts=1) as gateway:  # one attempt: a retry must not hide an unclosed reply
        results = gateway.run(requests)
    statuses = [r.record.status for r in results]
    assert statuses == ["ok"] * 20, [(s, r.record.error) for s, r in zip(statuses, results) if s != "ok"]
    for result in results:
        jsonschema.validate(result.parsed, SCHEMA)
        assert result.parsed["post"].strip()
