"""One attempt at one provider: scripted providers in-process, everything else via ``litellm.acompletion``.

Both paths return a :class:`ProviderReply` or raise the provider's exception; retries, cache, budget
and provenance are the gateway's business.
"""
from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING, Any

from pvsst.sim.llm.endpoints import placeholder_api_key
from pvsst.sim.llm.option_probabilities import (
    TOP_LOGPROBS,
    distribution_from_top_logprobs,
    distribution_reply,
    from_logprobs,
)
from pvsst.sim.llm.providers import embedded
from pvsst.sim.llm.providers.registry import import_litellm, split_model
from pvsst.sim.llm.providers.scripted import load_scripted_provider
from pvsst.sim.llm.raw_reply import BodyRecorder, rejoined
from pvsst.sim.llm.steering import STEERING_FIELD
from pvsst.sim.llm.structured_modes import response_format_for
from pvsst.sim.llm.types import LLMRequest, ProviderReply

if TYPE_CHECKING:
    from pvsst.sim.llm.endpoints import EndpointPool


OLLAMA_PREFIXES = ("ollama", "ollama_chat")


def think_params(prefix: str, think: bool) -> dict[str, Any]:
    """The litellm keyword that switches a model's reasoning on or off.

    Ollama routes take Ollama's own top-level ``think`` field (litellm's Ollama transformations copy
    it into the request body). Other providers have no common switch (vLLM wants a chat-template
    argument, OpenAI a reasoning effort per model family), so nothing is sent to them.

    >>> think_params("ollama_chat", False), think_params("openai", False)
    ({'think': False}, {})
    """
    if prefix in OLLAMA_PREFIXES:
        return {"think": bool(think)}
    return {}


def generate_kwargs(name: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """litellm arguments that send an Ollama model's request to ``/api/generate`` as the reference does.

    litellm's ``ollama/`` route posts ``model``, ``prompt``, ``options`` (``seed``, ``temperature``,
    ``num_predict``), ``stream`` and, when asked, ``format`` and ``think``. By default it folds every
    message into ``prompt`` under ``### System:`` / ``### User:`` headings; a per-call prompt template
    whose roles add nothing (``roles``) makes ``prompt`` the user text exactly, and ``extra_body`` adds the
    top-level ``system`` field with the system text. The body is then the reference's:
    ``{model, prompt, system, format: "json", think: false, stream: false, options: {seed, temperature,
    num_predict}}``.

    >>> kwargs = generate_kwargs("qwen3:4b", [{"role": "system", "content": "S"}, {"role": "user", "content": "U\\n"}])
    >>> kwargs["model"], kwargs["messages"], kwargs["extra_body"]
    ('ollama/qwen3:4b', [{'role': 'user', 'content': 'U\\n'}], {'system': 'S'})
    """
    system = [str(m["content"]) for m in messages if m.get("role") == "system"]
    out: dict[str, Any] = {
        "model": f"ollama/{name}",
        "messages": [dict(m) for m in messages if m.get("role") != "system"],
        "roles": {role: {"pre_message": "", "post_message": ""} for role in ("system", "user", "assistant")},
    }
    if system:
        out["extra_body"] = {"system": "\n".join(system)}
    return out


def _reply_cost(litellm: Any, response: Any) -> float:
    hidden = getattr(response, "_hidden_params", None) or {}
    cost = hidden.get("response_cost")
    # litellm has already priced the reply when the key is present; None there means "no price known"
    # (local / custom providers), and asking completion_cost again costs ~0.6 ms of CPU to fail.
    if cost is None and "response_cost" not in hidden:
        try:
            cost = litellm.completion_cost(completion_response=response)
        except Exception:  # no price known for this model (local / custom): it costs nothing here
            cost = 0.0
    return float(cost or 0.0)


def reply_from_response(litellm: Any, response: Any, **where: Any) -> ProviderReply:
    """Text, tokens, cost and refusal flag of a litellm ``ModelResponse`` (``where``: endpoint,
    failovers and structured-output mode of the call)."""
    choice = response.choices[0] if response.choices else None
    message = getattr(choice, "message", None)
    text = getattr(message, "content", None) or ""
    finish_reason = getattr(choice, "finish_reason", None)
    refusal = bool(getattr(message, "refusal", None)) or finish_reason == "content_filter"
    usage = getattr(response, "usage", None)
    return ProviderReply(
        text=text,
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cost_usd=_reply_cost(litellm, response),
        refusal=refusal,
        **where,
        truncated=finish_reason == "length",
    )


async def call_provider(request: LLMRequest, seed: int | None, *, timeout_s: float, api_base: str | None,
                        mode: str = "json_schema", pool: EndpointPool | None = None) -> ProviderReply:
    """Send ``request`` with ``seed`` (the attempt's seed) to its provider, once.

    A schema is asked for in structured-output ``mode`` (:mod:`pvsst.sim.llm.structured_modes`); with a
    ``pool`` the pool's Router picks the endpoint and the mode learned for it.

    Examples
    --------
    >>> import asyncio
    >>> request = LLMRequest(model_name="scripted/echo", messages=({"role": "user", "content": "hello"},))
    >>> asyncio.run(call_provider(request, 1, timeout_s=5, api_base=None)).text
    'hello'
    """
    prefix, name = split_model(request.model_name)
    if request.option_scoring is not None and prefix != "scripted":
        return await _score_options(request, seed, timeout_s=timeout_s, api_base=api_base)
    if prefix == "scripted":
        # In-process: litellm would add ~3 ms of CPU per call to a reply that takes microseconds.
        return load_scripted_provider(name).reply(dataclasses.replace(request, seed=seed))
    litellm = import_litellm()
    kwargs: dict[str, Any] = {
        "model": request.model_name,
        "messages": [dict(m) for m in request.messages],
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "timeout": timeout_s,
        "max_retries": 0,  # the gateway retries; the provider SDK must not retry behind its back
        "drop_params": True,  # a provider without seed / response_format support still answers
    }
    if seed is not None:
        kwargs["seed"] = seed
    if request.think is not None:
        kwargs.update(think_params(prefix, request.think))
    if request.ollama_route == "generate" and prefix in OLLAMA_PREFIXES:
        kwargs.update(generate_kwargs(name, kwargs["messages"]))
    recorder = None
    if request.steering is not None:  # only embedded models get here steered (Gateway checks first)
        kwargs[STEERING_FIELD] = request.steering.to_dict()
    if request.reasoning_blocks == "keep" and prefix != "embedded":
        kwargs["logger_fn"] = recorder = BodyRecorder()  # the body as received: see pvsst.sim.llm.raw_reply
    schema = request.schema
    if request.json_mode == "json_object":
        # Any JSON object, no schema: Ollama's `format: "json"` (litellm maps json_object to it).
        kwargs["response_format"], mode, schema = {"type": "json_object"}, "json_mode", None
    if pool is not None and prefix not in ("embedded",):
        response, routed = await pool.acompletion(schema, **kwargs)
        reply = reply_from_response(litellm, response, endpoint=routed.endpoint, failovers=routed.failovers,
                                    mode=routed.mode if schema is not None else mode if request.schema else "")
        return _as_sent(reply, response, recorder)
    response_format = response_format_for(schema, mode) if schema is not None else kwargs.get("response_format")
    if response_format is not None:
        kwargs["response_format"] = response_format
    if api_base is not None and prefix not in ("embedded",):
        kwargs["api_base"] = api_base
        key = placeholder_api_key(request.model_name)
        if key is not None:
            kwargs["api_key"] = key
    response = await litellm.acompletion(**kwargs)
    reply = reply_from_response(litellm, response, endpoint=(api_base or "") if prefix != "embedded" else "",
                                mode=mode if request.schema is not None else "")
    return _as_sent(reply, response, recorder)


def _as_sent(reply: ProviderReply, response: Any, recorder: BodyRecorder | None) -> ProviderReply:
    """Under ``reasoning_blocks: keep`` (a ``recorder``): the reply text as the server sent it."""
    if recorder is None:
        return reply
    text = recorder.text()
    if text is None:
        choice = response.choices[0] if response.choices else None
        message = getattr(choice, "message", None)
        text = rejoined(getattr(message, "content", None), getattr(message, "reasoning_content", None))
    return dataclasses.replace(reply, text=text)


async def _score_options(request: LLMRequest, seed: int | None, *, timeout_s: float,
                         api_base: str | None) -> ProviderReply:
    """An option-scoring request (``logprobs`` elicitation): the reply text is the distribution's JSON.

    The embedded model scores every option in-process (llama.cpp); a litellm provider answers once with
    ``logprobs=True, top_logprobs=20`` and the options are read off the answer's tokens.
    """
    prefix, name = split_model(request.model_name)
    codes = list(request.option_scoring or ())
    if prefix == "embedded":
        out = await asyncio.to_thread(embedded.option_logprobs, name, [dict(m) for m in request.messages], codes,
                                      request.steering)
        return ProviderReply(text=distribution_reply(from_logprobs(out["logprobs"])),
                             prompt_tokens=out["prompt_tokens"], completion_tokens=out["completion_tokens"])
    litellm = import_litellm()
    kwargs: dict[str, Any] = {
        "model": request.model_name, "messages": [dict(m) for m in request.messages],
        "temperature": request.temperature, "max_tokens": request.max_tokens, "timeout": timeout_s,
        "max_retries": 0, "logprobs": True, "top_logprobs": TOP_LOGPROBS,
    }
    if seed is not None:
        kwargs["seed"] = seed
    if request.schema is not None:
        kwargs["response_format"] = response_format_for(request.schema)
    if api_base is not None:
        kwargs["api_base"] = api_base
    response = await litellm.acompletion(**kwargs)
    reply = reply_from_response(litellm, response)
    choice = response.choices[0] if response.choices else None
    logprobs = getattr(choice, "logprobs", None)
    content = (logprobs.get("content") if isinstance(logprobs, dict) else getattr(logprobs, "content", None)) or []
    try:
        text = distribution_reply(distribution_from_top_logprobs(content, codes))
    except ValueError as err:  # recorded as a parse failure of this reply, never a crash
        text = f"no distribution: {err}"
    return dataclasses.replace(reply, text=text)
