"""The embedded SmolLM2 model through the gateway and the CLI: deterministic, schema-valid, cached."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from pvsst.sim.llm.cache import ResponseCache
from pvsst.sim.llm.config import GatewayConfig
from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.llm.providers import embedded
from pvsst.sim.llm.types import LLMRequest

pytestmark = [pytest.mark.embedded, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
SCHEMA = {"type": "object", "properties": {
    "post": {"type": "string", "minLength": 1, "maxLength": 80},
    "opinion": {"type": "string", "enum": ["support", "neutral", "oppose"]},
    "confidence": {"type": "number", "minimum": 0, "maximum": 1}},
    "required": ["post", "opinion", "confidence"], "additionalProperties": False}
MESSAGES = ({"role": "user", "content": "Should AI-generated content be labeled? Reply with a short post, "
                                        "your opinion and your confidence."},)


def test_same_seed_same_text_and_seed_matters():
    def text(seed, temperature=0.9):
        return embedded.generate("smollm2-135m", list(MESSAGES), temperature=temperature, max_tokens=24,
                                 seed=seed, schema=None)["text"]
    first = text(11)
    assert text(12) != first or text(13) != first  # sampling depends on the seed
    assert text(11) == first  # re-seeded and reset per call: a pure function of (request, seed)


def test_gateway_schema_replies_validate_and_replay(tmp_path):
    requests = [LLMRequest(model_name="embedded/smollm2-135m", messages=MESSAGES, schema=SCHEMA, seed=seed,
                           temperature=0.7, max_tokens=80) for seed in (1, 2)]
    with Gateway(GatewayConfig(max_concurrency=2), cache=ResponseCache(tmp_path / "c.sqlite")) as gateway:
        fresh = gateway.run(requests)
    assert all(r.ok for r in fresh), [r.record.error for r in fresh]
    for result in fresh:
        jsonschema.validate(result.parsed, SCHEMA)
        assert result.record.completion_tokens > 0 and result.record.cost_usd == 0.0
    with Gateway(cache=ResponseCache(tmp_path / "c.sqlite"), replay_only=True) as replay:
        again = replay.run(requests)
        assert replay.provider_tries == 0
    assert [r.text for r in again] == [r.text for r in fresh]
    assert all(r.record.cached for r in again)


def test_cli_embedded_twice_in_two_processes(tmp_path):
    schema_file = tmp_path / "s.json"
    schema_file.write_text(json.dumps(SCHEMA))
    env = {**os.environ, "PYTHONPATH": str(REPO), "PVSST_CACHE": str(tmp_path / "c.sqlite")}
    args = [sys.executable, "-m", "pvsst.experiments.cli", "llm", "complete", "--model", "embedded/smollm2-135m",
            "--schema", str(schema_file), "--seed", "7", "--max-tokens", "80", "--json",
            "--prompt", MESSAGES[0]["content"]]
    runs = [subprocess.run(args, env=env, capture_output=True, text=True, timeout=600) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr + runs[1].stderr
    first, second = (json.loads(r.stdout) for r in runs)
    jsonschema.validate(first["parsed"], SCHEMA)
    assert first["text"] == second["text"]
    assert (first["provenance"]["cached"], second["provenance"]["cached"]) == (False, True)
    assert second["provenance"]["attempts"] == 0
