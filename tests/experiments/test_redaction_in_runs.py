"""Secrets never reach the run store, the report or the terminal: a loopback server that echoes the API key it
was sent (and the credentials of its URL) in its error text, as some servers and proxies do."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from runner_helpers import small_smoke_spec
from served_study import served_spec

from pvsst.experiments.cli import main

KEY = "sk-pvsst-test-" + "Q7xW2vR9kL4mN8pT3zY6"
PASSWORD = "hunter2-correct-horse"


class EchoServer:
    """Answers every chat request with HTTP 400 whose message repeats the request's Authorization header."""

    def __init__(self):
        self.authorizations: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                authorization = self.headers.get("Authorization", "")
                server.authorizations.append(authorization)
                payload = json.dumps({"error": {"message": f"invalid credentials: {authorization} for "
                                                f"{self.headers.get('Host')}", "type": "invalid_request_error"}})
                self.send_response(400)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload.encode())

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def echo():
    server = EchoServer()
    yield server
    server.close()


def leaks(folder: Path, *secrets: str) -> list[str]:
    """The files under ``folder`` that hold any of ``secrets``."""
    return [str(path) for path in folder.rglob("*") if path.is_file()
            and any(secret.encode() in path.read_bytes() for secret in secrets)]


@pytest.mark.slow
def test_an_echoed_key_and_url_credentials_reach_no_file_and_no_terminal(tmp_path, echo, monkeypatch, capfd):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    plain = f"http://127.0.0.1:{echo.port}/v1"
    spec = served_spec(tmp_path, "openai/echo", {"api_base": plain, "structured_output": "json_schema"},
                       n_agents=3, n_rounds=1, seeds=(101,))
    assert main(["run", str(spec), "--out", str(tmp_path / "run")]) == 1  # every call failed: degraded
    assert any(KEY in seen for seen in echo.authorizations)  # the server did get the key, and echoed it
    # A model server's URL with credentials, given on the command line: recorded (as a deviation) redacted. The
    # scripted model makes no request, so the run finishes and its report shows the deviation.
    with_credentials = f"http://alice:{PASSWORD}@127.0.0.1:{echo.port}/v1"
    scripted = small_smoke_spec(tmp_path / "scripted", "[101]", topics="[ai_labels]")
    assert main(["run", str(scripted), "--out", str(tmp_path / "run2"), "--api-base", with_credentials]) == 0
    for run in ("run", "run2"):
        assert main(["report", str(tmp_path / run), "--format", "md,html", "--figures", "png"]) == 0
    out, err = capfd.readouterr()
    assert KEY not in out + err and PASSWORD not in out + err
    assert leaks(tmp_path / "run", KEY, PASSWORD) == [] and leaks(tmp_path / "run2", KEY, PASSWORD) == []
    import pandas as pd

    errors = pd.concat(pd.read_parquet(path) for path in (tmp_path / "run").glob("trials/*/llm_calls.parquet"))["error"]
    assert errors.str.contains("invalid credentials: Bearer [redacted]", regex=False).all()
    manifest = json.loads((tmp_path / "run2" / "manifest.json").read_text())
    assert f"http://[redacted]@127.0.0.1:{echo.port}/v1" in json.dumps(manifest["deviations"])
    assert f"http://[redacted]@127.0.0.1:{echo.port}/v1" in (tmp_path / "run2" / "report" / "report.md").read_text()
