"""The reply text exactly as the server sent it (``reasoning_blocks: keep``).

litellm splits a reply that starts with ``<think>...</think>`` (also ``<thinking>``,
``<budget:thinking>``) before anyone sees it: on the Ollama routes (``ollama/``, ``ollama_chat/``: in
their response transformations) and on OpenAI-compatible servers (``openai/``, ``hosted_vllm/``: in
``convert_dict_to_response``) the message's ``content`` holds the text after the closing tag and
``reasoning_content`` the text inside the tags; the tag itself is gone. On ``ollama/`` with
``format: json`` litellm also re-serialises a reply that parses as JSON (``json.dumps``), so even its
spacing changes. A field a server sends separately (Ollama's ``thinking``, vLLM's ``reasoning_content``)
was never part of the reply text and stays out under both settings.

Under ``keep`` the gateway passes litellm a per-call ``logger_fn``; litellm hands it the response body
as received (``original_response`` of the ``post_api_call`` event) before any transformation, and
:func:`text_of_body` reads the reply text from it: ``message.content`` (``/api/chat``), ``response``
(``/api/generate``) or ``choices[0].message.content`` (OpenAI's chat format). Where no body was seen
(in-process providers, which litellm never transforms) the message content is the text; should a route
ever split a block without handing over its body, :func:`rejoined` puts ``<think>`` + reasoning +
``</think>`` back in front of the content.

Examples
--------
>>> text_of_body('{"message": {"role": "assistant", "content": "<think>a{</think>{}"}}')
'<think>a{</think>{}'
>>> text_of_body('{"response": " {\\\\"a\\\\": 1}"}'), text_of_body("<html>")
(' {"a": 1}', None)
>>> rejoined('{"x": 1}', "hm {"), rejoined("plain", None)
('<think>hm {</think>{"x": 1}', 'plain')
"""
from __future__ import annotations

import json
from typing import Any


class BodyRecorder:
    """A litellm ``logger_fn`` that keeps the raw response bodies of one call (``bodies``)."""

    def __init__(self) -> None:
        self.bodies: list[str] = []

    def __call__(self, details: dict[str, Any]) -> None:
        if details.get("log_event_type") == "post_api_call" and isinstance(details.get("original_response"), str):
            self.bodies.append(details["original_response"])

    def text(self) -> str | None:
        """The reply text of the last body that holds one (``None``: no such body)."""
        for body in reversed(self.bodies):
            text = text_of_body(body)
            if text is not None:
                return text
        return None


def text_of_body(body: str) -> str | None:
    """The reply text in a raw response body of Ollama's ``/api/chat`` or ``/api/generate`` or an
    OpenAI-style chat completion; ``None`` if the body holds none of them."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    message = data.get("message")
    if isinstance(message, dict) and isinstance(message.get("content"), str):
        return message["content"]
    if isinstance(data.get("response"), str):
        return data["response"]
    choices = data.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        content = (choices[0].get("message") or {}).get("content")
        if isinstance(content, str):
            return content
    return None


def rejoined(content: str | None, reasoning: str | None) -> str:
    """``content`` with a split-off reasoning block put back in front (``<think>`` tags)."""
    if not reasoning:
        return content or ""
    return f"<think>{reasoning}</think>{content or ''}"
