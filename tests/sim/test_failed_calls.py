"""Failed calls under each preset, on a loopback Ollama stub that answers each account with one failure class.

One round, six honest agents, model ``ollama_chat/stub`` at seed 101. Post calls by account ordinal:
0 gets HTTP 500, 1 an HTML page (status 200), 2 no answer past the timeout, 3 a ``<think>`` block
holding a brace before valid JSON, 4 and 5 valid JSON. Vote calls: ordinal 5 gets ``{"votes": []}``
(JSON without one usable vote), the others five valid votes.

Expected values are the reference implementation's failure handling, stated in ``pvsst.sim.protocol``
(``pvsst_reference``: 3 tries per request with waits of 1.5, 3 and 4.5 s, every error retried, then
``(generation failed)`` without a parse retry; the raw reply with its ``<think>`` block reaches the
lenient parser, which fails on the brace three times and keeps the raw text; a vote call that parsed
without a usable vote is a cast ballot with no vote) and pvsst's (5 tries, waits 1, 2, 4, 8 s; the block split off by
litellm; the schema rejects an empty vote list). Waits are those the gateway asks of its ``sleep``,
injected, so no test time is spent waiting.
"""
from __future__ import annotations

import asyncio
import json
from collections import Counter, defaultdict

import pytest
from ollama_stub import Hang, OllamaStub, Raw

from pvsst.analysis.study.outcomes import honest_agent_ids, vote_call_failure_rate
from pvsst.sim.llm.config import GatewayConfig
from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.llm.types import LLMRequest
from pvsst.sim.protocol import protocol_from_preset
from pvsst.sim.topics import get_topic
from pvsst.sim.trial.run import run_trial
from pvsst.sim.trial.settings import TrialSetup

SEED = 101
TIMEOUT_S = 1.0  # ~100x a loopback answer, one request at a time, on a busy machine; each hung try waits it
THINK = '<think>Maybe {"post": "no</think>'
GOOD_POST = {"post": "Labels help.", "opinion": "support", "confidence": 0.6, "reason": "stub"}
THINK_POST = {"post": "Thought first.", "opinion": "strongly support", "confidence": 0.9, "reason": "stub"}


def phase_and_ordinal(body: dict) -> tuple[int, int]:
    offset = body["options"]["seed"] - SEED * 100000  # round 0: phase * 500 + ordinal (+ attempt under pvsst)
    return offset // 500, offset % 500


def reply(body: dict, n_seen: int):
    phase, ordinal = phase_and_ordinal(body)
    if phase == 1:  # posts
        if ordinal == 0:
            return 500
        if ordinal == 1:
            return Raw("<html><body><h1>502 Bad Gateway</h1></body></html>")
        if ordinal == 2:
            return Hang(TIMEOUT_S + 0.5)
        if ordinal == 3:
            return THINK + json.dumps(THINK_POST)
        return json.dumps(GOOD_POST)
    if ordinal >= 5:  # the last voter; under pvsst its retries step the seed past the others'
        return json.dumps({"votes": []})
    return json.dumps({"votes": [1, 0, -1, 1, 0]})


def reply_without_hang(body: dict, n_seen: int):
    """``reply`` with a valid post for ordinal 2: for tests of votes alone, which need not wait out a hang."""
    phase, ordinal = phase_and_ordinal(body)
    return json.dumps(GOOD_POST) if (phase, ordinal) == (1, 2) else reply(body, n_seen)


def run(preset: str, answer=reply, **overrides):
    config = TrialSetup(trial_id="t", model_name="ollama_chat/stub", topic=get_topic("ai_labels"),
                         condition="likes", seed=SEED, n_agents=6, n_rounds=1,
                         protocol=protocol_from_preset(preset, **overrides))
    waits: dict[str, list[float]] = defaultdict(list)

    async def sleep(seconds: float) -> None:  # one list per call: each call runs as its own task
        waits[asyncio.current_task().get_name()].append(seconds)

    with OllamaStub(answer) as stub:
        # litellm's first call in a process imports its route's code (done here, not inside the timeout),
        # and its HTTP clients belong to an event loop (the trial's gateway warms its own)
        protocol = config.protocol
        warm_up = LLMRequest(model_name=config.model_name, seed=1, messages=({"role": "system", "content": "warm"},
                                                                      {"role": "user", "content": "up"}),
                             json_mode=protocol.json_mode, ollama_route=protocol.ollama_route,
                             reasoning_blocks=protocol.reasoning_blocks)
        with Gateway(GatewayConfig(api_base=stub.api_base, request_timeout_s=120)) as warm:
            assert warm.run([warm_up])[0].ok
        gateway = Gateway(GatewayConfig(api_base=stub.api_base, request_timeout_s=TIMEOUT_S, max_concurrency=1),
                          sleep=sleep)
        try:
            assert gateway.run([warm_up])[0].ok and not waits
            gateway.drain_records()
            stub.bodies.clear()
            result = run_trial(config, gateway)
        finally:
            gateway.close()
    return result, stub.bodies, sorted(waits.values())


@pytest.fixture(scope="module")
def reference():
    return run("pvsst_reference")


@pytest.fixture(scope="module")
def pvsst():
    return run("pvsst")


def requests_per_call(bodies) -> dict[tuple[int, int], int]:
    """(phase, ordinal of the first attempt's seed) -> requests; pvsst's parse retries step the seed, so
    they are counted under the call's first seed by prompt."""
    first_seed: dict[str, int] = {}
    counts: Counter = Counter()
    for body in bodies:
        prompt = json.dumps([body.get("system"), body.get("prompt"), body.get("messages")])
        seed = first_seed.setdefault(prompt, body["options"]["seed"])
        counts[phase_and_ordinal({"options": {"seed": seed}})] += 1
    return dict(counts)


def seeds_by_prompt(bodies) -> list[list[int]]:
    seeds: dict[str, list[int]] = defaultdict(list)
    for body in bodies:
        seeds[json.dumps([body.get("system"), body.get("prompt"),
                          body.get("messages")])].append(body["options"]["seed"])
    return list(seeds.values())


def post_rows(result):
    posts = result.posts.set_index("agent_id")
    initial = result.agents.set_index("agent_id")["initial_stance"]
    return posts, initial


def test_reference_requests_per_call_and_seeds(reference):
    result, bodies, _ = reference
    assert requests_per_call(bodies) == {(1, 0): 3, (1, 1): 3, (1, 2): 3, (1, 3): 3, (1, 4): 1, (1, 5): 1,
                                         **{(2, i): 1 for i in range(6)}}
    assert all(len(set(seeds)) == 1 for seeds in seeds_by_prompt(bodies))  # every try repeats the seed
    assert all("prompt" in body and "system" in body for body in bodies)  # /api/generate


def test_reference_waits_after_every_failed_try(reference):
    _, _, waits = reference
    assert waits == [[1.5, 3.0, 4.5]] * 3  # 500, HTML, hang; the think reply is a parse retry: no wait


def test_reference_rows(reference):
    result, _, _ = reference
    posts, initial = post_rows(result)
    for agent in ("a00", "a01", "a02"):
        assert posts.loc[agent, "text"] == "(generation failed)"
    assert posts.loc["a03", "text"] == (THINK + json.dumps(THINK_POST))[:180]  # the raw reply, block included
    for agent in ("a00", "a01", "a02", "a03"):
        assert posts.loc[agent, "stance"] == initial[agent] and posts.loc[agent, "confidence"] == 0.7
        assert not posts.loc[agent, "parse_ok"]
    for agent in ("a04", "a05"):
        assert (posts.loc[agent, "text"], posts.loc[agent, "stance"], posts.loc[agent, "confidence"]) == \
            ("Labels help.", 2, 0.6) and posts.loc[agent, "parse_ok"]
    statuses = result.llm_calls.set_index(["phase", "agent_id"])["status"]
    assert [statuses[("post", f"a0{i}")] for i in range(4)] == ["server_error", "server_error", "timeout",
                                                                 "parse_error"]
    votes = result.votes
    cast_empty = votes[votes["voter_id"] == "a05"]  # {"votes": []}: a ballot cast with no vote
    assert len(cast_empty) == 5 and (cast_empty["value"] == 0).all() and cast_empty["parse_ok"].all()
    assert len(votes) == 30 and votes["parse_ok"].all()
    assert vote_call_failure_rate(votes, honest_agent_ids(result.agents)) == 0.0


def test_reference_with_rows_denominator_drops_the_voter():
    result, _, _ = run("pvsst_reference", reply_without_hang, vote_error_denominator="rows")
    votes = result.votes
    assert "a05" not in set(votes["voter_id"]) and votes["parse_ok"].all() and len(votes) == 25
    assert vote_call_failure_rate(votes, honest_agent_ids(result.agents)) == 0.0


def test_pvsst_requests_per_call_and_seeds(pvsst):
    result, bodies, _ = pvsst
    assert requests_per_call(bodies) == {(1, 0): 5, (1, 1): 5, (1, 2): 5, (1, 3): 1, (1, 4): 1, (1, 5): 1,
                                         **{(2, i): 1 for i in range(5)}, (2, 5): 3}
    seeds = sorted(seeds_by_prompt(bodies), key=len)
    assert [s for s in seeds if len(s) == 5] and all(len(set(s)) == 1 for s in seeds if len(s) == 5)  # transport
    vote_retry = [s for s in seeds if len(s) == 3]
    assert vote_retry == [[vote_retry[0][0] + i for i in range(3)]]  # schema attempts step the seed
    assert all("messages" in body for body in bodies)  # /api/chat


def test_pvsst_waits(pvsst):
    _, _, waits = pvsst
    assert waits == [[1.0, 2.0, 4.0, 8.0]] * 3


def test_pvsst_rows(pvsst):
    result, _, _ = pvsst
    posts, initial = post_rows(result)
    for agent in ("a00", "a01", "a02"):
        assert posts.loc[agent, "text"] == "(no post)" and not posts.loc[agent, "parse_ok"]
        assert posts.loc[agent, "stance"] == initial[agent] and posts.loc[agent, "confidence"] == 0.7
    # litellm split the block off: the JSON after it is the reply
    assert (posts.loc["a03", "text"], posts.loc["a03", "stance"], posts.loc["a03", "confidence"]) == \
        ("Thought first.", 3, 0.9) and posts.loc["a03", "parse_ok"]
    statuses = result.llm_calls.set_index(["phase", "agent_id"])["status"]
    assert [statuses[("post", f"a0{i}")] for i in range(4)] == ["server_error", "server_error", "timeout", "ok"]
    votes = result.votes
    failed = votes[~votes["parse_ok"]]
    assert set(failed["voter_id"]) == {"a05"} and len(failed) == 5 and len(votes) == 30
    assert statuses[("vote", "a05")] == "parse_error"
    assert vote_call_failure_rate(votes, honest_agent_ids(result.agents)) == pytest.approx(1 / 6)
