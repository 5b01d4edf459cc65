"""Model names, provider availability, and our providers' registration with litellm."""
from __future__ import annotations

import asyncio
import time

import pytest

from pvsst.core.errors import InputError
from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.llm.providers.registry import (
    available_providers,
    ensure_runnable,
    import_litellm,
    register_scripted_provider,
    validate_model_name,
)
from pvsst.sim.llm.providers.scripted import SCRIPTED_PROVIDERS
from pvsst.sim.llm.types import LLMRequest


@pytest.mark.parametrize("model", ["scripted/echo", "scripted/imitate", "embedded/smollm2-135m",
                                   "openai/gpt-4o-mini", "ollama/llama3", "hosted_vllm/meta-llama/Llama-3-8B",
                                   "anthropic/claude-x", "gpt-4o-mini"])
def test_known_models_pass(model):
    validate_model_name(model)


@pytest.mark.parametrize("model, fragment", [
    ("madeup/model", "unknown provider prefix 'madeup/'"),
    ("scripted/unknown", "unknown scripted provider"),
    ("embedded/llama-70b", "unknown embedded model"),
    ("openai/", "model name missing"),
    ("", "empty model name"),
    ("no-such-bare-model-xyz", "give a provider prefix"),
])
def test_unknown_models_raise_input_error(model, fragment):
    with pytest.raises(InputError) as err:
        validate_model_name(model)
    assert fragment in str(err.value) and err.value.source == "model" and err.value.field == model


def test_validation_is_cheap_after_the_first_call():
    validate_model_name("openai/gpt-4o")
    started = time.perf_counter()
    for _ in range(10_000):
        validate_model_name("openai/gpt-4o")
    assert (time.perf_counter() - started) / 10_000 < 50e-6


def test_registered_scripted_provider_is_known_and_gateway_rejects_unknown():
    assert SCRIPTED_PROVIDERS["imitate"] == "pvsst.sim.llm.providers.imitate:ImitateProvider"
    register_scripted_provider("echo_alias", "pvsst.sim.llm.providers.scripted:EchoProvider")
    ensure_runnable("scripted/echo_alias")
    register_scripted_provider("missing_module", "pvsst.sim.llm.providers.not_there:X")
    with pytest.raises(InputError, match="not installed"):
        ensure_runnable("scripted/missing_module")
    with Gateway() as gateway, pytest.raises(InputError, match="unknown provider prefix"):
        gateway.run([LLMRequest(model_name="bogus/x", messages=({"role": "user", "content": "x"},))])


def test_available_providers_rows():
    infos = {info.name: info for info in available_providers()}
    assert {"embedded/smollm2-135m", "scripted/echo", "scripted/imitate", "openai/<model>"} <= set(infos)
    assert infos["scripted/echo"].runnable and infos["scripted/echo"].kind == "scripted"


def test_litellm_routes_our_providers_to_the_same_reply():
    litellm = import_litellm()
    assert {"embedded", "scripted"} <= {item["provider"] for item in litellm.custom_provider_map}
    schema = {"type": "object", "properties": {"w": {"type": "string", "maxLength": 10}}, "required": ["w"]}
    request = LLMRequest(model_name="scripted/echo", messages=({"role": "user", "content": "alpha beta gamma"},),
                         schema=schema, seed=9)
    response = asyncio.run(litellm.acompletion(
        model=request.model_name, messages=list(request.messages), seed=9, temperature=request.temperature,
        max_tokens=request.max_tokens,
        response_format={"type": "json_schema", "json_schema": {"name": "reply", "schema": schema, "strict": True}}))
    with Gateway() as gateway:
        direct = gateway.run([request])[0]
    assert response.choices[0].message.content == direct.text
    assert response.usage.prompt_tokens == direct.record.prompt_tokens == 3
