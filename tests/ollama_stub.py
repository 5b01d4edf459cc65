"""A loopback Ollama-compatible server (``POST /api/chat``) that records every request body.

Bound to 127.0.0.1 on a free port, started and stopped by the test (``with OllamaStub(reply) as stub``).
``reply(body, n_seen)`` returns the assistant text for a request body, or an HTTP status (int) to fail
it with; ``n_seen`` counts earlier requests with the same seed and messages, so a stub can fail the first
attempt and answer the retry.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[dict[str, Any], int], str]


class OllamaStub:
    def __init__(self, reply: Reply):
        self.reply = reply
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []
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
                    if self.path != "/api/chat":
                        self._send(404, {"error": f"no route {self.path}"})
                        return
                    stub.bodies.append(body)
                    key = json.dumps([body.get("options", {}).get("seed"), body.get("messages")], sort_keys=True)
                    n_seen = stub._seen.get(key, 0)
                    stub._seen[key] = n_seen + 1
                text = stub.reply(body, n_seen)
                if isinstance(text, int):
                    self._send(text, {"error": f"scripted {text}"})
                    return
                self._send(200, {"model": body.get("model", ""), "created_at": "2026-01-01T00:00:00Z",
                                 "message": {"role": "assistant", "content": text}, "done": True,
                                 "done_reason": "stop", "prompt_eval_count": 10, "eval_count": 5})

            def do_GET(self) -> None:
                with stub._lock:
                    stub.paths.append(self.path)
                self._send(404, {"error": f"no route {self.path}"})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
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
