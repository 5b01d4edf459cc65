"""A scripted OpenAI-compatible chat server on 127.0.0.1 for the gateway's fault tests.

Each POST to ``/v1/chat/completions`` takes the next step of the script (the last step repeats once
the script is used up). The server counts requests, records the seeds it was sent, and measures the
most requests it had in flight at once.
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
    """One scripted answer: ``kind`` is ok | status | raw | refusal; ``delay_s`` is waited first."""

    kind: str = "ok"
    content: str | None = "hello"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""
    delay_s: float = 0.0
    prompt_tokens: int = 10
    completion_tokens: int = 5


def ok(content: str | None = "hello", delay_s: float = 0.0, **usage: int) -> Step:
    return Step("ok", content=content, delay_s=delay_s, **usage)


def http_error(status: int, headers: dict[str, str] | None = None, delay_s: float = 0.0) -> Step:
    body = json.dumps({"error": {"message": f"scripted {status}", "type": "server_error", "code": str(status)}})
    return Step("status", status=status, headers=headers or {}, body=body, delay_s=delay_s)


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
        "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
        "usage": {"prompt_tokens": step.prompt_tokens, "completion_tokens": step.completion_tokens,
                  "total_tokens": step.prompt_tokens + step.completion_tokens},
    }


class StubServer:
    """``with StubServer([ok("hi")]) as stub: ... stub.api_base ...``"""

    def __init__(self, script: list[Step]):
        self.script = list(script) or [ok()]
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
                step = stub._begin(body)
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

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> "StubServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class CountingEchoProvider:
    """``scripted/echo`` that counts its calls (class-wide), to prove cache hits reach no provider."""

    name = "counting"
    calls = 0

    def reply(self, request: Any) -> Any:
        from sim.llm.providers.scripted import EchoProvider

        type(self).calls += 1
        return EchoProvider().reply(request)
