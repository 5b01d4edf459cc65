"""litellm ``CustomLLM`` handlers for our providers (imported only once litellm is being imported).

litellm hands a custom handler the model name without its prefix, the messages, and the sampling
parameters in ``optional_params`` (temperature, max_tokens, seed, response_format), with any other
keyword of the call: a steered call's :data:`~pvsst.sim.llm.steering.STEERING_FIELD`.
"""
from __future__ import annotations

import asyncio
from typing import Any

import litellm  # noqa: F401 (the registry configures litellm through this module's import)
from litellm import CustomLLM
from litellm.types.utils import Choices, Message, ModelResponse, Usage

from pvsst.sim.llm.providers import embedded
from pvsst.sim.llm.providers.scripted import load_scripted_provider
from pvsst.sim.llm.steering import STEERING_FIELD
from pvsst.sim.llm.types import LLMRequest


def schema_of(optional_params: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema inside an OpenAI-style ``response_format``, if any."""
    response_format = optional_params.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return (response_format.get("json_schema") or {}).get("schema")
    if response_format.get("type") == "json_object":
        return response_format.get("schema") or {"type": "object"}
    return None


def fill_response(model_response: ModelResponse, model: str, text: str, prompt_tokens: int,
                  completion_tokens: int, finish_reason: str = "stop") -> ModelResponse:
    model_response.choices = [Choices(index=0, finish_reason=finish_reason,
                                      message=Message(role="assistant", content=text))]
    model_response.model = model
    setattr(model_response, "usage", Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                                           total_tokens=prompt_tokens + completion_tokens))
    return model_response


class EmbeddedHandler(CustomLLM):
    """``embedded/<name>``: runs the GGUF model in a worker thread (llama.cpp releases the GIL)."""

    def _generate(self, model: str, messages: list, optional_params: dict[str, Any]) -> dict[str, Any]:
        return embedded.generate(
            model, messages,
            temperature=float(optional_params.get("temperature", 0.8)),
            max_tokens=int(optional_params.get("max_tokens", 120)),
            seed=optional_params.get("seed"),
            schema=schema_of(optional_params),
            steering=optional_params.get(STEERING_FIELD),
        )

    def completion(self, model: str, messages: list, api_base: str, custom_prompt_dict: dict,
                   model_response: ModelResponse, print_verbose: Any, encoding: Any, api_key: Any,
                   logging_obj: Any, optional_params: dict, *args: Any, **kwargs: Any) -> ModelResponse:
        out = self._generate(model, messages, optional_params)
        return fill_response(model_response, model, out["text"], out["prompt_tokens"], out["completion_tokens"],
                             out["finish_reason"])

    async def acompletion(self, model: str, messages: list, api_base: str, custom_prompt_dict: dict,
                          model_response: ModelResponse, print_verbose: Any, encoding: Any, api_key: Any,
                          logging_obj: Any, optional_params: dict, *args: Any, **kwargs: Any) -> ModelResponse:
        out = await asyncio.to_thread(self._generate, model, messages, optional_params)
        return fill_response(model_response, model, out["text"], out["prompt_tokens"], out["completion_tokens"],
                             out["finish_reason"])


class ScriptedHandler(CustomLLM):
    """``scripted/<name>`` through litellm (the gateway itself calls scripted providers directly)."""

    def _reply(self, model: str, messages: list, optional_params: dict[str, Any]) -> Any:
        request = LLMRequest(
            model_name=f"scripted/{model}",
            messages=tuple(dict(m) for m in messages),
            schema=schema_of(optional_params),
            temperature=float(optional_params.get("temperature", 0.8)),
            max_tokens=int(optional_params.get("max_tokens", 120)),
            seed=optional_params.get("seed"),
        )
        return load_scripted_provider(model).reply(request)

    def completion(self, model: str, messages: list, api_base: str, custom_prompt_dict: dict,
                   model_response: ModelResponse, print_verbose: Any, encoding: Any, api_key: Any,
                   logging_obj: Any, optional_params: dict, *args: Any, **kwargs: Any) -> ModelResponse:
        reply = self._reply(model, messages, optional_params)
        return fill_response(model_response, model, reply.text, reply.prompt_tokens, reply.completion_tokens)

    async def acompletion(self, model: str, messages: list, api_base: str, custom_prompt_dict: dict,
                          model_response: ModelResponse, print_verbose: Any, encoding: Any, api_key: Any,
                          logging_obj: Any, optional_params: dict, *args: Any, **kwargs: Any) -> ModelResponse:
        reply = self._reply(model, messages, optional_params)
        return fill_response(model_response, model, reply.text, reply.prompt_tokens, reply.completion_tokens)
