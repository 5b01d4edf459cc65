"""A scripted OpenAI-compatible chat server on 127.0.0.1 for the gateway's fault tests.

Each POST to ``/v1/chat/completions`` takes the next step of the script (the last step repeats once
the script is used up). The server counts requests, records the seeds it was sent, and measures the
most requests it had in flight at once. With ``reply=`` the content of an ``ok`` answer is a function
of the request body instead (:func:`imitate_reply`: the scripted null model behind HTTP, so any number
of such servers answer a request alike). ``stop_after=n`` makes the server die after ``n`` requests:
later requests find the connection closed without an answer, as when a model server is killed.
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Step:
    """One scripted answer: ``kind`` is ok | status | raw | refusal; ``delay_s`` is waited first;
    ``finish_reason`` is ``length`` for a reply cut at the token limit."""

    kind: str = "ok"
    content: str | None = "hello"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""
    delay_s: float = 0.0
    prompt_tokens: int = 10
    completion_tokens: int = 5
    finish_reason: str = "stop"


def ok(content: str | None = "hello", delay_s: float = 0.0, **usage: int) -> Step:
    return Step("ok", content=content, delay_s=delay_s, **usage)


def http_error(status: int, headers: dict[str, str] | None = None, delay_s: float = 0.0) -> Step:
    body = json.dumps({"error": {"message": f"scripted {status}", "type": "server_error", "code": str(status)}})
    return Step("status", status=status, headers=headers or {}, body=body, delay_s=delay_s)


def cut(content: str) -> Step:
    """A reply the provider stopped at ``max_tokens`` (``finish_reason: length``)."""
    return Step("ok", content=content, finish_reason="length")


def raw(body: str) -> Step:
    return Step("raw", body=body)


def refusal() -> Step:
    return Step("refusal", content=None)


def completion_body(step: Step, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": step.content}
    if step.kind == "refusal":
        message["refusal"] = "I can't help with that."
    return {
        "id": "chatcmpl-stub", "object": "chat.completion", "created": 1700000000, "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": step.finish_reason, "logprobs": None}],
        "usage": {"prompt_tokens": step.prompt_tokens, "completion_tokens": step.completion_tokens,
                  "total_tokens": step.prompt_tokens + step.completion_tokens},
    }


class StubServer:
    """``with StubServer([ok("hi")]) as stub: ... stub.api_base ...``"""

    def __init__(self, script: list[Step] | None = None, reply: Any = None, stop_after: int | None = None):
        self.script = list(script or []) or [ok()]
        self.reply = reply
        self.stop_after = stop_after
        self.stopped = False
        self.requests = 0
        self.seeds: list[Any] = []
        self.bodies: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.arrivals: list[float] = []
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if stub._dead():
                    self.close_connection = True  # a killed server: the connection ends, no answer
                    return
                step = stub._begin(body)
                if stub.reply is not None and step.kind == "ok":
                    step = Step("ok", content=stub.reply(body), prompt_tokens=step.prompt_tokens,
                                completion_tokens=step.completion_tokens, delay_s=step.delay_s)
                try:
                    time.sleep(step.delay_s)
                    self._answer(step, body.get("model", "stub"))
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and hung up: expected in the timeout tests
                finally:
                    stub._end()

            def _answer(self, step: Step, model: str) -> None:
                if step.kind == "status":
                    payload, code = step.body.encode(), step.status
                elif step.kind == "raw":
                    payload, code = step.body.encode(), 200
                else:
                    payload, code = json.dumps(completion_body(step, model)).encode(), 200
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for key, value in step.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _dead(self) -> bool:
        with self._lock:
            return self.stopped or (self.stop_after is not None and self.requests >= self.stop_after)

    def _close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _begin(self, body: dict[str, Any]) -> Step:
        with self._lock:
            step = self.script[min(self.requests, len(self.script) - 1)]
            self.requests += 1
            self.seeds.append(body.get("seed"))
            self.bodies.append(body)
            self.arrivals.append(time.monotonic())
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        return step

    def _end(self) -> None:
        with self._lock:
            self.in_flight -= 1
            dies = self.stop_after is not None and self.requests >= self.stop_after and not self.stopped
            if dies:
                self.stopped = True
        if dies:  # killed right after its last answer: no new connections, open ones end unanswered
            threading.Thread(target=self._close, daemon=True).start()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> "StubServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            already, self.stopped = self.stopped, True
        if not already:
            self._close()


def request_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asks for: from ``response_format`` (json_schema or llama.cpp's
    json_object form), else the simulation's own post / vote schema told apart by the prompt."""
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return response_format["json_schema"]["schema"]
    if response_format.get("schema") is not None:
        return response_format["schema"]
    from pvsst.sim.prompts import post_schema, vote_schema

    prompt = "\n".join(m.get("content") or "" for m in body.get("messages", []) if m.get("role") == "user")
    ballot = [line for line in prompt.splitlines() if line.startswith("[") and "] @" in line]
    return vote_schema(len(ballot)) if ballot else post_schema(180)


def imitate_reply(body: dict[str, Any]) -> str:
    """``scripted/imitate``'s reply to an OpenAI chat request: a pure function of messages and seed."""
    from pvsst.sim.llm.providers.imitate import ImitateProvider
    from pvsst.sim.llm.types import LLMRequest

    request = LLMRequest(model_name="scripted/imitate", messages=tuple(body.get("messages", ())),
                         schema=request_schema(body), seed=body.get("seed"))
    return ImitateProvider().reply(request).text


class CountingEchoProvider:
    """``scripted/echo`` that counts its calls (class-wide), to prove cache hits reach no provider."""

    name = "counting"
    calls = 0

    def reply(self, request: Any) -> Any:
        from pvsst.sim.llm.providers.scripted import EchoProvider

        type(self).calls += 1
        return EchoProvider().reply(request)
