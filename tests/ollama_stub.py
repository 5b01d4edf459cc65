"""A loopback Ollama-compatible server (``POST /api/chat`` and ``/api/generate``) that records every request.

Bound to 127.0.0.1 on a free port, started and stopped by the test (``with OllamaStub(reply) as stub``).
``reply(body, n_seen)`` returns the assistant text for a request body, an HTTP status (int) to fail it
with, a :class:`Raw` answer (any status and body, e.g. an HTML page) or a :class:`Hang` (no answer for
that long); ``n_seen`` counts earlier requests with the same seed and prompt, so a stub can fail the first
attempt and answer the retry. ``bodies`` and ``paths`` record every request; ``arrivals`` its
``time.monotonic()``.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ROUTES = ("/api/chat", "/api/generate")


@dataclass(frozen=True)
class Raw:
    """An answer sent as given: ``status``, ``body`` text and its ``content_type``."""

    body: str
    status: int = 200
    content_type: str = "text/html"


@dataclass(frozen=True)
class Hang:
    """No answer for ``seconds`` (past the client's timeout), then an empty JSON object."""

    seconds: float


Reply = Callable[[dict[str, Any], int], "str | int | Raw | Hang"]


class OllamaStub:
    def __init__(self, reply: Reply):
        self.reply = reply
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.arrivals: list[float] = []
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with stub._lock:
                    stub.paths.append(self.path)
                    if self.path not in ROUTES:
                        self._send(404, {"error": f"no route {self.path}"})
                        return
                    stub.bodies.append(body)
                    stub.arrivals.append(time.monotonic())
                    prompt = (body.get("messages") if self.path == "/api/chat"
                              else [body.get("system"), body.get("prompt")])
                    key = json.dumps([body.get("options", {}).get("seed"), prompt], sort_keys=True)
                    n_seen = stub._seen.get(key, 0)
                    stub._seen[key] = n_seen + 1
                text = stub.reply(body, n_seen)
                try:
                    self._answer(text, body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a hang past its timeout)

            def _answer(self, text: "str | int | Raw | Hang", body: dict[str, Any]) -> None:
                if isinstance(text, Hang):
                    time.sleep(text.seconds)
                    self._send(200, {})
                    return
                if isinstance(text, Raw):
                    data = text.body.encode()
                    self.send_response(text.status)
                    self.send_header("Content-Type", text.content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if isinstance(text, int):
                    self._send(text, {"error": f"scripted {text}"})
                    return
                answer = {"model": body.get("model", ""), "created_at": "2026-01-01T00:00:00Z", "done": True,
                          "done_reason": "stop", "prompt_eval_count": 10, "eval_count": 5}
                if self.path == "/api/chat":
                    answer["message"] = {"role": "assistant", "content": text}
                else:
                    answer["response"] = text
                self._send(200, answer)

            def do_GET(self) -> None:
                with stub._lock:
                    stub.paths.append(self.path)
                self._send(404, {"error": f"no route {self.path}"})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True  # a hanging answer must not hold up shutdown
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def api_base(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> "OllamaStub":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
