"""Scripted providers: deterministic, in-process stand-ins for a language model.

A scripted provider is any object with ``name: str`` and ``reply(request) -> ProviderReply`` that is a
pure function of the request (its messages, schema, sampling parameters and seed): the same request
gives the same reply in every process. Token counts are whitespace word counts. They serve as test
fakes and as mechanistic null models (``scripted/imitate``); the gateway calls them without litellm.
"""
from __future__ import annotations

import hashlib
import importlib
import json
from typing import Any, Protocol, runtime_checkable

import numpy as np

from pvsst.core.errors import InputError
from pvsst.sim.llm.types import LLMRequest, ProviderReply

# Provider name (the part after "scripted/") -> "module:Class", imported on first use. Other packages add
# theirs with ``registry.register_scripted_provider`` (the survey's controls do, from pvsst.experiments.survey).
SCRIPTED_PROVIDERS: dict[str, str] = {
    "echo": "pvsst.sim.llm.providers.scripted:EchoProvider",
    "imitate": "pvsst.sim.llm.providers.imitate:ImitateProvider",
    "planted_answer_shift": "pvsst.sim.llm.providers.planted:PlantedAnswerShift",
    "planted_answer_null": "pvsst.sim.llm.providers.planted:NullAnswerShift",
    "planted_contradiction": "pvsst.sim.llm.providers.planted:PlantedContradiction",
    "planted_same_side_votes": "pvsst.sim.llm.providers.planted:PlantedSameSideVotes",
    "planted_trial_null": "pvsst.sim.llm.providers.planted:NullTrialAgent",
    "planted_stance_shift": "pvsst.sim.llm.providers.planted:PlantedStanceShift",
    "planted_stance_null": "pvsst.sim.llm.providers.planted:NullStanceShift",
    "planted_income_reporting": "pvsst.sim.llm.providers.planted_reporting:PlantedIncomeReporting",
    "planted_household_reporting": "pvsst.sim.llm.providers.planted_reporting:PlantedHouseholdReporting",
    "lexicon_judge": "pvsst.sim.llm.providers.judge_scripted:LexiconJudgeProvider",
    "thread_commenter": "pvsst.sim.llm.providers.thread_scripted:ThreadCommenter",
    "thread_discloser": "pvsst.sim.llm.providers.thread_scripted:ThreadDiscloser",
    "attribute_reader": "pvsst.sim.llm.providers.thread_scripted:AttributeReader",
}


@runtime_checkable
class ScriptedProvider(Protocol):
    """The interface of a scripted provider."""

    name: str

    def reply(self, request: LLMRequest) -> ProviderReply: ...


_INSTANCES: dict[str, ScriptedProvider] = {}


def load_scripted_provider(name: str) -> ScriptedProvider:
    """The (cached) instance of the scripted provider ``name`` (``"echo"``, ``"imitate"``, ...).

    Examples
    --------
    >>> load_scripted_provider("echo").name
    'echo'
    """
    if name in _INSTANCES:
        return _INSTANCES[name]
    if name not in SCRIPTED_PROVIDERS:
        known = ", ".join(sorted(SCRIPTED_PROVIDERS))
        raise InputError("model", f"scripted/{name}", f"unknown scripted provider (known: {known})")
    module_name, _, class_name = SCRIPTED_PROVIDERS[name].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise InputError("model", f"scripted/{name}", f"provider module {module_name} is not available: {err}") from err
    provider = getattr(module, class_name)()
    _INSTANCES[name] = provider
    return provider


def word_count(text: str) -> int:
    return len(text.split())


def prompt_word_count(request: LLMRequest) -> int:
    return sum(word_count(str(m.get("content", ""))) for m in request.messages)


def last_user_message(request: LLMRequest) -> str:
    for message in reversed(request.messages):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def request_rng(request: LLMRequest) -> np.random.Generator:
    """A generator seeded from (prompt hash, seed): the only randomness a scripted reply may use."""
    digest = hashlib.sha256(f"{request.prompt_sha256()}:{request.seed}".encode()).digest()
    return np.random.default_rng(np.random.SeedSequence(int.from_bytes(digest[:16], "big")))


def schema_instance(schema: dict[str, Any], rng: np.random.Generator, words: list[str]) -> Any:
    """A small instance valid under ``schema``, drawn with ``rng``; strings are made of ``words``.

    Handles ``type`` (object, string, integer, number, boolean, array, null, or a list of these),
    ``enum`` / ``const``, ``anyOf`` / ``oneOf`` / ``allOf`` (first branch), ``minLength`` / ``maxLength``,
    ``minimum`` / ``maximum`` (and exclusive forms), ``minItems`` / ``maxItems``.

    Examples
    --------
    >>> schema = {"type": "object", "properties": {"opinion": {"enum": ["yes", "no"]},
    ...           "confidence": {"type": "number", "minimum": 0, "maximum": 1}},
    ...           "required": ["opinion", "confidence"]}
    >>> value = schema_instance(schema, np.random.default_rng(0), ["hello"])
    >>> sorted(value), value["opinion"] in ("yes", "no"), 0 <= value["confidence"] <= 1
    (['confidence', 'opinion'], True, True)
    """
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][int(rng.integers(len(schema["enum"])))]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return schema_instance(schema[key][0], rng, words)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: schema_instance(sub, rng, words) for name, sub in properties.items()}
    if kind == "array":
        low = int(schema.get("minItems", 0))
        high = int(schema.get("maxItems", max(low, 2)))
        count = int(rng.integers(low, high + 1))
        item_schema = schema.get("items", {"type": "string"})
        return [schema_instance(item_schema, rng, words) for _ in range(count)]
    if kind in ("integer", "number"):
        return _number(schema, rng, integer=(kind == "integer"))
    if kind == "boolean":
        return bool(rng.integers(2))
    if kind == "null":
        return None
    return _string(schema, rng, words)


def _number(schema: dict[str, Any], rng: np.random.Generator, *, integer: bool) -> int | float:
    low = schema.get("minimum", schema.get("exclusiveMinimum", 0 if integer else 0.0))
    high = schema.get("maximum", schema.get("exclusiveMaximum", low + 10))
    if integer:
        low = int(np.ceil(low)) + (1 if "minimum" not in schema and "exclusiveMinimum" in schema else 0)
        high = int(np.floor(high)) - (1 if "maximum" not in schema and "exclusiveMaximum" in schema else 0)
        return int(rng.integers(low, max(low, high) + 1))
    value = float(low + (high - low) * rng.random())
    # Rounded so the JSON text is short; kept inside the (possibly exclusive) bounds.
    rounded = round(value, 3)
    return rounded if low <= rounded <= high and rounded not in (
        schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")) else value


def _string(schema: dict[str, Any], rng: np.random.Generator, words: list[str]) -> str:
    max_length = int(schema.get("maxLength", 60))
    min_length = int(schema.get("minLength", 0))
    pool = words or ["ok"]
    start = int(rng.integers(len(pool)))
    text = " ".join(pool[start:start + 8] or pool[:8])[:max_length].strip()
    return text.ljust(min_length, "x")[:max_length] if len(text) < min_length else text


class EchoProvider:
    """``scripted/echo``: free text echoes the last user message (cut to ``max_tokens`` words); with a
    schema, a small valid instance drawn from (prompt hash, seed) with words of the last user message.

    Examples
    --------
    >>> request = LLMRequest(model_name="scripted/echo", messages=({"role": "user", "content": "hi there"},))
    >>> EchoProvider().reply(request).text
    'hi there'
    """

    name = "echo"

    def reply(self, request: LLMRequest) -> ProviderReply:
        user_text = last_user_message(request)
        if request.schema is None:
            text = " ".join(user_text.split()[: max(request.max_tokens, 0)])
        else:
            value = schema_instance(request.schema, request_rng(request), user_text.split())
            text = json.dumps(value, ensure_ascii=False)
        return ProviderReply(text=text, prompt_tokens=prompt_word_count(request),
                             completion_tokens=word_count(text))
