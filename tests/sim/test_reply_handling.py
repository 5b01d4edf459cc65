"""Lenient reply handling of the ``pvsst_reference`` preset, table-driven: the preset must read replies
as PV-SST's reference code does.

Expected values follow the reference code's rules for replies and votes, worked out by hand for each
input: prior stance +1 (lean support), prior confidence 0.70, post limit 10.
"""
from __future__ import annotations

import pytest

from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.llm.types import LLMRequest
from pvsst.sim.replies import (
    GENERATION_FAILED,
    lenient_json_object,
    lenient_post_reply,
    lenient_votes,
    strict_post_reply,
)

PRIOR_STANCE, PRIOR_CONFIDENCE, LIMIT = 1, 0.70, 10

POST_CASES = [
    # id, parsed reply, status, raw text, expected (post, stance, confidence, parse_ok)
    ("truncated", {"post": "  abcdefghijklmnop  ", "opinion": "oppose", "confidence": 0.5}, "ok", None,
     ("abcdefghij", -2, 0.5, True)),
    ("empty_post", {"post": "   ", "opinion": "support", "confidence": 0.5}, "ok", None, ("(empty)", 2, 0.5, True)),
    ("missing_post", {"opinion": "support", "confidence": 0.5}, "ok", None, ("(empty)", 2, 0.5, True)),
    ("number_post", {"post": 12345678901234, "opinion": "support", "confidence": 0.5}, "ok", None,
     ("1234567890", 2, 0.5, True)),
    ("exact_label", {"post": "x", "opinion": "lean oppose", "confidence": 0.5}, "ok", None, ("x", -1, 0.5, True)),
    ("label_padded", {"post": "x", "opinion": "  neutral ", "confidence": 0.5}, "ok", None, ("x", 0, 0.5, True)),
    # "strongly oppose" contains "oppose", which comes first in scale order
    ("Strongly_Oppose", {"post": "x", "opinion": "Strongly Oppose", "confidence": 0.5}, "ok", None,
     ("x", -2, 0.5, True)),
    # "lean support" contains "support", which comes first in scale order
    ("Lean_Support", {"post": "x", "opinion": "Lean Support", "confidence": 0.5}, "ok", None, ("x", 2, 0.5, True)),
    ("label_in_sentence", {"post": "x", "opinion": "I am now NEUTRAL", "confidence": 0.5}, "ok", None,
     ("x", 0, 0.5, True)),
    ("unknown_label_keeps_prior", {"post": "x", "opinion": "undecided", "confidence": 0.5}, "ok", None,
     ("x", 1, 0.5, True)),
    ("missing_label_keeps_prior", {"post": "x", "confidence": 0.5}, "ok", None, ("x", 1, 0.5, True)),
    ("confidence_above_one", {"post": "x", "opinion": "support", "confidence": 1.7}, "ok", None, ("x", 2, 1.0, True)),
    ("confidence_below_zero", {"post": "x", "opinion": "support", "confidence": -0.3}, "ok", None,
     ("x", 2, 0.0, True)),
    ("confidence_string_number", {"post": "x", "opinion": "support", "confidence": "0.25"}, "ok", None,
     ("x", 2, 0.25, True)),
    ("confidence_not_a_number", {"post": "x", "opinion": "support", "confidence": "high"}, "ok", None,
     ("x", 2, 0.70, True)),
    ("confidence_null", {"post": "x", "opinion": "support", "confidence": None}, "ok", None, ("x", 2, 0.70, True)),
    ("three_parse_failures", None, "parse_error", "  I think labels are good, really  ",
     ("I think la", 1, 0.70, False)),
    ("three_parse_failures_no_text", None, "empty", "", ("(no post)", 1, 0.70, False)),
    ("refusal", None, "refusal", None, ("(no post)", 1, 0.70, False)),
    ("transport_failure", None, "server_error", None, (GENERATION_FAILED, 1, 0.70, False)),
    ("timeout", None, "timeout", None, (GENERATION_FAILED, 1, 0.70, False)),
]


@pytest.mark.parametrize("parsed, status, text, expected", [c[1:] for c in POST_CASES], ids=[c[0] for c in POST_CASES])
def test_lenient_post_reply(parsed, status, text, expected):
    reply = lenient_post_reply(parsed, status, text, prior_stance=PRIOR_STANCE, prior_confidence=PRIOR_CONFIDENCE,
                               char_limit=LIMIT)
    assert (reply.post, reply.stance, reply.confidence, reply.parse_ok) == expected


def test_reason_is_cut_to_200_characters():
    reply = lenient_post_reply({"post": "x", "reason": "r" * 500}, "ok", None, prior_stance=1, prior_confidence=0.7,
                               char_limit=LIMIT)
    assert reply.reason == "r" * 200


def test_strict_handling_keeps_pvsst_behaviour_on_failure():
    reply = strict_post_reply(None, "parse_error", "  raw words here ", prior_stance=-2, prior_confidence=0.4,
                              char_limit=LIMIT)
    assert (reply.post, reply.stance, reply.confidence, reply.parse_ok) == ("raw words ", -2, 0.4, False)
    assert strict_post_reply(None, "server_error", None, prior_stance=1, prior_confidence=0.7,
                             char_limit=LIMIT).post == "(no post)"


VOTE_CASES = [
    # id, parsed reply, n targets, accepted (position, vote)
    ("exact", {"votes": [1, 0, -1]}, 3, [(0, 1), (1, 0), (2, -1)]),
    ("short_list_keeps_what_it_has", {"votes": [1]}, 3, [(0, 1)]),
    ("long_list_extra_ignored", {"votes": [1, 0, -1, 1, 1]}, 3, [(0, 1), (1, 0), (2, -1)]),
    ("clamped", {"votes": [5, -9, 2]}, 3, [(0, 1), (1, -1), (2, 1)]),
    ("non_integers_skipped", {"votes": ["up", None, 1]}, 3, [(2, 1)]),
    ("integer_strings_and_floats", {"votes": ["1", 0.9, -1.5]}, 3, [(0, 1), (1, 0), (2, -1)]),
    ("nested_list_skipped", {"votes": [[1], 1]}, 2, [(1, 1)]),
    ("not_a_list", {"votes": "1, 0, -1"}, 3, []),
    ("missing", {"likes": [1, 1]}, 2, []),
    ("empty_list", {"votes": []}, 2, []),
]


@pytest.mark.parametrize("parsed, n, expected", [c[1:] for c in VOTE_CASES], ids=[c[0] for c in VOTE_CASES])
def test_lenient_votes(parsed, n, expected):
    assert lenient_votes(parsed, "ok", n) == expected


@pytest.mark.parametrize("status", ["parse_error", "empty", "server_error"])
def test_failed_vote_calls_give_no_votes(status):
    assert lenient_votes(None, status, 3) == []


JSON_CASES = [
    ('{"a": 1}', {"a": 1}),
    ('Here you go:\n{"a": {"b": [1, 2]}}\nThanks', {"a": {"b": [1, 2]}}),
    ("[1, 2, 3]", None),  # JSON, but not an object
    ('["x", {"a": 1}]', {"a": 1}),  # not an object as a whole; its first { .. last } span is
    ('{"a": 1} and then {"b": 2}', None),  # first { to last } is not valid JSON
    ("{not json}", None),
    ("no braces at all", None),
    ("", None),
]


@pytest.mark.parametrize("text, expected", JSON_CASES)
def test_lenient_json_object(text, expected):
    assert lenient_json_object(text) == expected


def test_gateway_lenient_parse_makes_three_attempts_with_one_seed_and_keeps_the_last_text():
    gateway = Gateway()
    request = LLMRequest(model_name="scripted/echo", messages=({"role": "user", "content": "no json here"},),
                         seed=41, parse="lenient", retry_seed="same")
    result = gateway.run([request])[0]
    gateway.close()
    assert result.record.status == "parse_error"
    assert result.extra["seeds"] == [41, 41, 41]
    assert result.text == "no json here"
    reply = lenient_post_reply(result.parsed, result.record.status, result.text, prior_stance=-1,
                               prior_confidence=0.6, char_limit=LIMIT)
    assert (reply.post, reply.stance, reply.confidence, reply.parse_ok) == ("no json he", -1, 0.6, False)


def test_gateway_lenient_parse_accepts_an_object_the_schema_would_reject():
    gateway = Gateway()
    text = 'ok: {"post": "hi", "opinion": "Lean Support", "confidence": 3}'
    request = LLMRequest(model_name="scripted/echo", messages=({"role": "user", "content": text},), seed=3,
                         parse="lenient")
    result = gateway.run([request])[0]
    gateway.close()
    assert result.ok and result.parsed == {"post": "hi", "opinion": "Lean Support", "confidence": 3}
    assert result.extra["seeds"] == [3]
    reply = lenient_post_reply(result.parsed, result.record.status, result.text, prior_stance=-1,
                               prior_confidence=0.6, char_limit=LIMIT)
    assert (reply.post, reply.stance, reply.confidence, reply.parse_ok) == ("hi", 2, 1.0, True)

