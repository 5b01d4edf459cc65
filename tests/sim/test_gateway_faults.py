"""Provider faults against a scripted OpenAI-compatible server on 127.0.0.1: every fault ends in success
after retries or in a recorded failure with the right status and attempt count, never an exception."""
from __future__ import annotations

import time

import pytest
from gateway_stub import StubServer, cut, http_error, ok, raw, refusal

from pvsst.sim.llm.budget import Budget, BudgetExceeded
from pvsst.sim.llm.config import GatewayConfig
from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.llm.types import LLMRequest

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"],
          "additionalProperties": False}
MODEL = "openai/gpt-4o-mini"


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")


def request(text: str = "hi", seed: int = 5, schema=None, **fields) -> LLMRequest:
    return LLMRequest(model_name=MODEL, messages=({"role": "user", "content": text},), seed=seed, schema=schema,
                      **fields)


def run_one(script, *, schema=None, request_timeout_s=5.0, **gateway_options):
    options = {"backoff_base_s": 0.01, "max_retries": 2, **gateway_options}
    with StubServer(script) as stub:
        config = GatewayConfig(api_base=stub.api_base, request_timeout_s=request_timeout_s)
        with Gateway(config, **options) as gateway:
            result = gateway.run([request(schema=schema)])[0]
    return result, stub


# name -> (script, schema, expected status, attempts, seeds the server saw, parsed)
CASES = {
    "500 then 503 then ok": ([http_error(500), http_error(503), ok()], None, "ok", 3, [5, 5, 5], None),
    "500 forever": ([http_error(500)], None, "server_error", 3, [5, 5, 5], None),
    "429 forever": ([http_error(429)], None, "rate_limited", 3, [5, 5, 5], None),
    "malformed HTTP body then ok": ([raw("{this is not json"), ok()], None, "ok", 2, [5, 5], None),
    "malformed JSON content then valid": ([ok("n = 3, sorry"), ok('{"n": 3}')], SCHEMA, "ok", 2, [5, 6], {"n": 3}),
    "JSON fenced with leading text": ([ok('Here:\n```json\n{"n": 4}\n```')], SCHEMA, "ok", 1, [5], {"n": 4}),
    "JSON not valid under schema forever": ([ok('{"n": "three"}')], SCHEMA, "parse_error", 3, [5, 6, 7], None),
    "empty forever": ([ok("")], None, "empty", 3, [5, 6, 7], None),
    "null content forever": ([ok(None)], SCHEMA, "empty", 3, [5, 6, 7], None),
    "refusal then valid": ([refusal(), ok('{"n": 1}')], SCHEMA, "ok", 2, [5, 6], {"n": 1}),
    "refusal forever": ([refusal()], SCHEMA, "refusal", 3, [5, 6, 7], None),
    "cut at the token limit forever": ([cut('{"n": ')], SCHEMA, "truncated", 3, [5, 6, 7], None),
    "cut then complete": ([cut('{"n": '), ok('{"n": 8}')], SCHEMA, "ok", 2, [5, 6], {"n": 8}),
    "free text cut at the token limit": ([cut("labels build tr")], None, "truncated", 3, [5, 6, 7], None),
    "401 is not retried": ([http_error(401)], None, "error", 1, [5], None),
    "400 is not retried": ([http_error(400)], None, "error", 1, [5], None),
    "transport retry inside a schema retry": ([http_error(502), ok("nope"), http_error(500), ok('{"n": 2}')],
                                              SCHEMA, "ok", 4, [5, 5, 6, 6], {"n": 2}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_fault_ends_in_success_or_recorded_failure(name):
    script, schema, status, attempts, seeds, parsed = CASES[name]
    result, stub = run_one(script, schema=schema)
    record = result.record
    assert (record.status, record.attempts, stub.seeds) == (status, attempts, seeds)
    assert stub.requests == attempts
    assert record.request_seed == 5 and not record.cached
    assert result.parsed == parsed
    assert result.extra["seeds"] == sorted(set(seeds))
    if status == "ok":
        assert record.error == "" and result.text
    else:
        assert record.error and "\n" not in record.error


def test_valid_reply_is_parsed_and_costed():
    result, _ = run_one([ok('{"n": 7}', prompt_tokens=1000, completion_tokens=500)], schema=SCHEMA)
    assert result.parsed == {"n": 7}
    assert (result.record.prompt_tokens, result.record.completion_tokens) == (1000, 500)
    # gpt-4o-mini in litellm's bundled price map: $0.15 / 1M input tokens, $0.60 / 1M output tokens.
    assert result.record.cost_usd == pytest.approx(1000 * 0.15e-6 + 500 * 0.60e-6)


def test_429_honours_retry_after():
    result, stub = run_one([http_error(429, {"Retry-After": "1"}), ok()])
    assert (result.record.status, result.record.attempts) == ("ok", 2)
    # backoff_base_s is 0.01 s, so only the Retry-After header explains a ~1 s wait.
    assert stub.arrivals[1] - stub.arrivals[0] >= 0.95


def test_timeout_then_success_and_timeout_forever():
    result, stub = run_one([ok(delay_s=1.5), ok()], request_timeout_s=0.4)
    assert (result.record.status, result.record.attempts, stub.requests) == ("ok", 2, 2)
    result, stub = run_one([ok(delay_s=1.5)], request_timeout_s=0.4, max_retries=1)
    assert (result.record.status, result.record.attempts, stub.requests) == ("timeout", 2, 2)
    assert "Timeout" in result.record.error


def test_concurrency_limit_is_respected():
    with StubServer([ok(delay_s=0.15)]) as stub:
        with Gateway(GatewayConfig(api_base=stub.api_base, max_concurrency=4)) as gateway:
            results = gateway.run([request(f"q{i}") for i in range(24)])
    assert all(r.ok for r in results)
    assert stub.max_in_flight == 4  # reached, never exceeded


def test_requests_per_minute_pacing():
    starts: list[float] = []
    with StubServer([ok()]) as stub:
        with Gateway(GatewayConfig(api_base=stub.api_base, requests_per_minute=600, max_concurrency=8)) as gateway:
            acquire = gateway._pacer.acquire

            async def timed_acquire():
                await acquire()
                starts.append(time.monotonic())

            gateway._pacer.acquire = timed_acquire
            gateway.run([request(f"q{i}") for i in range(6)])
    # 600 per minute = one start per 100 ms (burst 1): start i comes no earlier than i * 100 ms after the
    # first (less 5 ms of clock granularity). The server's arrival times are not asserted on: they add
    # the client's own jitter, which a loaded machine makes tens of milliseconds.
    assert (len(starts), stub.requests) == (6, 6)
    assert all(t - starts[0] >= i * 0.1 - 0.005 for i, t in enumerate(starts))


def test_records_follow_request_order_and_ids_are_deterministic():
    requests = [request(f"q{i}", trial_id="t1", agent_id=f"a{i}", round=2, phase="post") for i in range(8)]
    with StubServer([ok(delay_s=0.05)]) as stub:
        with Gateway(GatewayConfig(api_base=stub.api_base, max_concurrency=8)) as gateway:
            gateway.run(requests)
            first = gateway.drain_records()
            assert gateway.records == []
            gateway.run(requests)
            second = gateway.drain_records()
    assert [r.agent_id for r in first] == [f"a{i}" for i in range(8)]
    assert [r.call_id for r in first] == [r.call_id for r in second]
    assert len({r.call_id for r in first}) == 8
    assert all((r.trial_id, r.round, r.phase, r.model_name) == ("t1", 2, "post", MODEL) for r in first)


def test_usd_budget_stops_the_job_within_one_batch():
    per_call = 10 * 0.15e-6 + 5 * 0.60e-6  # the stub's usage at gpt-4o-mini prices
    cap, concurrency = 12 * per_call, 4
    with StubServer([ok(delay_s=0.02)]) as stub:
        budget = Budget(max_usd=cap)
        with Gateway(GatewayConfig(api_base=stub.api_base, max_concurrency=concurrency), budget=budget) as gateway:
            with pytest.raises(BudgetExceeded) as err:
                gateway.run([request(f"q{i}") for i in range(60)])
            records = gateway.records
    assert cap <= budget.spent_usd <= cap + concurrency * per_call + 1e-12
    assert stub.requests < 60 and len(records) == stub.requests == len(err.value.completed)
    assert sum(r.cost_usd for r in records) == pytest.approx(budget.spent_usd)
    message = str(err.value)
    assert "\n" not in message and message.startswith("LLM budget exceeded: spent $")


def test_token_budget_with_scripted_model():
    budget = Budget(max_tokens=100)
    words = "one two three four five"  # echo: 5 prompt + 5 completion tokens per call
    requests = [LLMRequest(model_name="scripted/echo", messages=({"role": "user", "content": f"{words} {i}"},), seed=i)
                for i in range(50)]
    with Gateway(GatewayConfig(max_concurrency=3), budget=budget) as gateway:
        with pytest.raises(BudgetExceeded, match="tokens of a 100-token cap"):
            gateway.run(requests)
        # Scripted calls complete without yielding, so the cap is met exactly at a call boundary.
        assert 100 <= budget.spent_tokens <= 100 + 3 * 12
        assert len(gateway.records) == budget.spent_tokens // 12
    with Gateway(budget=budget) as gateway, pytest.raises(BudgetExceeded):
        gateway.run(requests[:1])  # a spent budget starts nothing new
