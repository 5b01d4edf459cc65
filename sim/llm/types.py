"""Value types of the LLM gateway: a request, a provider reply, a call's provenance record, a result.

These are the contract between the simulation (which builds requests), the gateway (which executes
them through litellm with cache / retries / budget) and the run store (``llm_calls.parquet``).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pvsst.sim.llm.option_probabilities import distribution_schema

if TYPE_CHECKING:
    from pvsst.sim.llm.steering import Steering

# Column order of llm_calls.parquet (docs/run-store.md), plus `error` for failed calls.
CALL_RECORD_FIELDS = (
    "call_id", "trial_id", "round", "agent_id", "phase", "model", "request_seed", "prompt_sha256",
    "cached", "attempts", "status", "prompt_tokens", "completion_tokens", "cost_usd", "latency_s",
    "error", "endpoint", "failovers", "structured_output",
)

# Terminal statuses of a call.
STATUS_OK = "ok"                      # reply parsed and validated against the schema
STATUS_PARSE_ERROR = "parse_error"    # every attempt replied, none valid under the schema
STATUS_EMPTY = "empty"                # every attempt replied with nothing
STATUS_TRUNCATED = "truncated"        # the reply was cut at the token limit (finish_reason "length")
STATUS_REFUSAL = "refusal"            # the provider refused (content filter / refusal field)
STATUS_TIMEOUT = "timeout"            # transport retries exhausted on timeouts
STATUS_RATE_LIMIT = "rate_limited"    # transport retries exhausted on 429
STATUS_SERVER_ERROR = "server_error"  # transport retries exhausted on 5xx / connection errors
STATUS_ERROR = "error"                # a non-retryable provider error (4xx other than 429, ...)
TRANSPORT_STATUSES = frozenset({STATUS_TIMEOUT, STATUS_RATE_LIMIT, STATUS_SERVER_ERROR, STATUS_ERROR})
"""Statuses of a call that never got a reply (the reference implementation's "generation failed")."""

# How a request asks for, parses and retries its reply (``pvsst.sim.protocol``); the defaults are pvsst's.
TRANSPORT_RETRIES = ("gateway", "reference")
REASONING_BLOCKS = ("strip", "keep")
OLLAMA_ROUTES = ("model", "generate")


@dataclass(frozen=True)
class LLMRequest:
    """One model call as the simulation asks for it; ``model_name`` is the LLM string (``scripted/imitate``).

    ``messages`` is a tuple of ``{"role": ..., "content": ...}`` dicts. ``schema`` is a JSON schema the
    reply must satisfy (``None`` for free text). The tags (``trial_id`` ... ``phase``) do not change the
    reply; they only label the provenance record.

    ``json_mode``: send the schema as the ``response_format`` (``schema``) or ask for any JSON object
    (``json_object``, Ollama's ``format: json``). ``parse``: validate against the schema (``schema``) or
    take any JSON object in the reply (``lenient``, :func:`pvsst.sim.replies.lenient_json_object`).
    ``retry_seed``: attempt ``i`` uses ``seed + i`` (``next``) or ``seed`` again (``same``).
    ``think``: ``False`` switches a reasoning model's thinking off; ``None`` leaves the default.
    ``transport_retries``: how a request that got no reply is tried again (``gateway``: the gateway's
    own rule; ``reference``: 3 tries, waits 1.5, 3, 4.5 s, every error). ``reasoning_blocks``: the reply
    text with litellm's ``<think>`` split applied (``strip``) or as the server sent it (``keep``).
    ``ollama_route``: an Ollama model by its own route (``model``) or on ``/api/generate`` with the
    reference's payload (``generate``). See :mod:`pvsst.sim.protocol`.
    ``steering``: identity injection on the embedded model (:class:`pvsst.sim.llm.steering.Steering`):
    the control vector of the call's persona; ``None`` for an unsteered call.
    ``option_scoring`` (the option codes) asks for the
    model's probability of each code as the answer of the ``{"answer": ...}`` reply instead of a sampled
    reply (:mod:`pvsst.sim.llm.option_probabilities`); the parsed reply is then ``{"probabilities": ...}``.
    """

    model_name: str
    messages: tuple[dict[str, str], ...]
    schema: dict[str, Any] | None = None
    temperature: float = 0.8
    max_tokens: int = 120
    seed: int | None = None
    trial_id: str = ""
    round: int = -1
    agent_id: str = ""
    phase: str = ""
    json_mode: str = "schema"
    parse: str = "schema"
    retry_seed: str = "next"
    think: bool | None = None
    option_scoring: tuple[str, ...] | None = None
    transport_retries: str = "gateway"
    reasoning_blocks: str = "strip"
    ollama_route: str = "model"
    steering: Steering | None = None

    def reply_schema(self) -> dict[str, Any] | None:
        """The schema the parsed reply must satisfy: the distribution's for an option-scoring request."""
        if self.option_scoring is None:
            return self.schema
        return distribution_schema(self.option_scoring)

    def cache_key(self) -> str:
        """sha256 over everything that determines the reply (model, messages, schema, sampling, seed,
        and a steered call's :meth:`~pvsst.sim.llm.steering.Steering.digest`)."""
        memo = self.__dict__.get("_cache_key")
        if memo is not None:
            return memo
        payload = {
            "model": self.model_name,  # the key string stays "model": cached replies keep their keys
            "messages": list(self.messages),
            "schema": self.schema,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }
        # Non-default reply modes change what is sent or accepted; pvsst's defaults keep old keys valid.
        # (transport_retries decides only when a request is sent again, never what a reply is: not in the key.)
        for name, default in (("json_mode", "schema"), ("parse", "schema"), ("retry_seed", "next"), ("think", None),
                              ("reasoning_blocks", "strip"), ("ollama_route", "model")):
            if getattr(self, name) != default:
                payload[name] = getattr(self, name)
        if self.option_scoring is not None:  # absent otherwise: keys of sampled requests are unchanged
            payload["option_scoring"] = list(self.option_scoring)
        if self.steering is not None:  # absent otherwise: keys of unsteered requests are unchanged
            payload["steering"] = self.steering.digest()
        key = hashlib.sha256(canonical_json(payload).encode()).hexdigest()
        self.__dict__["_cache_key"] = key  # memo: the request is frozen, so the key cannot go stale
        return key

    def prompt_sha256(self) -> str:
        memo = self.__dict__.get("_prompt_sha256")
        if memo is None:
            digest = hashlib.sha256(canonical_json(list(self.messages)).encode()).hexdigest()
            memo = self.__dict__["_prompt_sha256"] = digest
        return memo


@dataclass(frozen=True)
class ProviderReply:
    """What a provider returned for one attempt: the text and token counts."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    refusal: bool = False
    endpoint: str = ""          # the api_base that served ("" in-process / provider default)
    failovers: int = 0          # times the Router moved the request to another endpoint first
    mode: str = ""              # structured-output mode sent (pvsst.sim.llm.structured_modes)
    truncated: bool = False  # the provider stopped at max_tokens (finish_reason "length")


@dataclass
class CallRecord:
    """One provenance row of ``llm_calls.parquet`` (``model_name`` is written as its ``model`` column)."""

    call_id: str
    trial_id: str
    round: int
    agent_id: str
    phase: str
    model_name: str
    request_seed: int | None
    prompt_sha256: str
    cached: bool
    attempts: int
    status: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    error: str = ""
    endpoint: str = ""
    failovers: int = 0
    structured_output: str = ""

    def to_dict(self) -> dict[str, Any]:
        row = {name: getattr(self, name) for name in CALL_RECORD_FIELDS if name != "model"}
        row["model"] = self.model_name  # PV-SST's column name
        return {name: row[name] for name in CALL_RECORD_FIELDS}


@dataclass
class LLMResult:
    """The gateway's answer: the final text, the parsed JSON (when a schema was given) and provenance."""

    text: str | None
    parsed: Any | None
    record: CallRecord
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.record.status == STATUS_OK


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: the canonical form every hash in pvsst is taken over."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
