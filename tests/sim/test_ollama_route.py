"""What a ``pvsst_reference`` trial sends to Ollama through litellm, checked on a loopback
Ollama-compatible stub that records every request body.

Expected values are the reference implementation's calls: a POST to ``/api/generate`` whose body is
exactly ``{model, prompt, system, format: "json", think: false, stream: false, options: {seed,
temperature, num_predict}}`` with the user message as ``prompt`` and the system message as ``system``
(the preset's ``ollama_route: generate``, whatever the Ollama prefix of the model string), seed
``trial_seed*100000 + round*1000 + phase*500 + ordinal`` (post phase 1, vote phase 2), posts at
temperature 0.8 / 120 tokens, votes at 0.6 / 70, and every retry of a call repeating its seed. The
``pvsst`` preset keeps the model string's route (``ollama_chat/``: ``/api/chat``, a system message).
"""
from __future__ import annotations

import json
from collections import Counter

import pytest
from ollama_stub import OllamaStub

from pvsst.sim.llm.config import GatewayConfig
from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.protocol import protocol_from_preset
from pvsst.sim.topics import get_topic
from pvsst.sim.trial.run import run_trial
from pvsst.sim.trial.settings import TrialSetup

SEED = 211
POST_REPLY = json.dumps({"post": "Labels help readers.", "opinion": "lean oppose", "confidence": 0.4,
                         "reason": "stub"})
VOTE_REPLY = json.dumps({"votes": [1, 0, -1, 1, 0]})


def is_post(body: dict) -> bool:
    return body["options"]["num_predict"] == 120


def reply(body: dict, n_seen: int) -> str:
    # The first attempt of every third post call (by seed) is not JSON: the gateway must retry it.
    if is_post(body) and body["options"]["seed"] % 3 == 0 and n_seen == 0:
        return "Sure! Here is my post."
    return POST_REPLY if is_post(body) else VOTE_REPLY


async def no_wait(seconds: float) -> None:
    """The gateway's sleep between transport tries, skipped (these tests count requests, not time)."""


def run(preset: str, condition: str = "distributed_sources"):
    config = TrialSetup(trial_id="t", model_name="ollama_chat/stub-model", topic=get_topic("ai_labels"),
                         condition=condition, seed=SEED, n_agents=6, n_rounds=2, protocol=protocol_from_preset(preset))
    with OllamaStub(reply) as stub:
        gateway = Gateway(GatewayConfig(api_base=stub.api_base, max_concurrency=4), max_retries=0, sleep=no_wait)
        try:
            result = run_trial(config, gateway)
        finally:
            gateway.close()
    run.paths = stub.paths
    return result, stub.bodies


@pytest.fixture(scope="module")
def reference_run():
    return run("pvsst_reference")


def test_every_request_is_the_reference_generate_payload(reference_run):
    result, bodies = reference_run
    assert len(bodies) > len(result.llm_calls)  # some calls were retried
    assert set(run.paths) - {"/api/show"} == {"/api/generate"}  # /api/show: litellm's model-info lookup
    prompts = result.prompts.set_index("prompt_sha256")
    sent = {(p.system, p.user) for p in prompts.itertuples()}
    for body in bodies:
        assert set(body) == {"model", "prompt", "system", "format", "think", "stream", "options"}
        assert set(body["options"]) == {"seed", "temperature", "num_predict"}
        assert (body["system"], body["prompt"]) in sent  # the stored texts, byte for byte, each in its field
        assert body["system"] and body["system"] not in body["prompt"]
        assert body["think"] is False
        assert body["format"] == "json"  # JSON mode, no schema
        assert body["stream"] is False
        assert body["model"] == "stub-model"


def test_temperatures_and_token_limits_by_phase(reference_run):
    _, bodies = reference_run
    posts = [b["options"] for b in bodies if is_post(b)]
    votes = [b["options"] for b in bodies if not is_post(b)]
    assert posts and votes
    assert {(o["temperature"], o["num_predict"]) for o in posts} == {(0.8, 120)}
    assert {(o["temperature"], o["num_predict"]) for o in votes} == {(0.6, 70)}


def test_request_seeds_follow_the_reference_formula(reference_run):
    result, bodies = reference_run
    ordinal = {agent: i for i, agent in enumerate(result.agents["agent_id"])}  # honest a00..a05, then c3000..
    calls = result.llm_calls
    phase = calls["phase"].map({"post": 1, "vote": 2})
    expected = [SEED * 100000 + r * 1000 + p * 500 + ordinal[a] for r, p, a in zip(calls["round"], phase,
                                                                                   calls["agent_id"])]
    assert calls["request_seed"].tolist() == expected
    assert len(calls) == 2 * (6 + 4) + 2 * 6  # posts by every account, votes by honest agents
    assert sorted(set(b["options"]["seed"] for b in bodies)) == sorted(expected)


def test_retries_repeat_the_seed_and_the_request(reference_run):
    result, bodies = reference_run
    per_seed = Counter(b["options"]["seed"] for b in bodies)
    retried = sorted(seed for seed, n in per_seed.items() if n > 1)
    calls = result.llm_calls
    post_seeds = calls.loc[calls["phase"] == "post", "request_seed"]
    assert retried == sorted(s for s in post_seeds if s % 3 == 0) and retried
    assert set(per_seed.values()) == {1, 2}
    for seed in retried:
        first, second = [b for b in bodies if b["options"]["seed"] == seed]
        assert first == second and "prompt" in first
    assert result.posts["parse_ok"].all()


def test_attackers_drift_with_their_replies_in_the_reference_preset(reference_run):
    result, _ = reference_run
    agents = result.agents.set_index("agent_id")
    attackers = [a for a in agents.index if a.startswith("c3")]
    assert attackers == ["c3000", "c3001", "c3002", "c3003"]
    assert (agents.loc[attackers, "initial_stance"] == -3).all()  # seed 211 pushes oppose
    assert (agents.loc[attackers, "final_stance"] == -1).all()  # the stub always replies "lean oppose"
    assert (agents.loc[attackers, "final_confidence"] == 0.4).all()


def test_pvsst_preset_sends_a_schema_steps_the_seed_and_holds_attackers():
    result, bodies = run("pvsst")
    assert set(run.paths) - {"/api/show"} == {"/api/chat"}
    assert all([m["role"] for m in b["messages"]] == ["system", "user"] for b in bodies)
    assert all(isinstance(b["format"], dict) and b["format"]["type"] == "object" for b in bodies)
    assert all("think" not in b for b in bodies)
    seeds_by_request: dict[str, list[int]] = {}
    for body in bodies:
        seeds_by_request.setdefault(json.dumps(body["messages"]), []).append(body["options"]["seed"])
    retried = [seeds for seeds in seeds_by_request.values() if len(seeds) > 1]
    assert retried and all(seeds == [seeds[0], seeds[0] + 1] for seeds in retried)
    agents = result.agents.set_index("agent_id")
    assert (agents.loc[[a for a in agents.index if a.startswith("x")], "final_stance"] == -3).all()


LONG_POST = "x" * 250
GARBAGE = "I would rather not answer in JSON."


def messy_reply(body: dict, n_seen: int):
    """Replies that exercise the lenient handling: by account ordinal (seed % 500 in the post phase)."""
    ordinal = body["options"]["seed"] % 500
    if is_post(body):
        if ordinal == 1:
            return 500  # transport failure (no retries in these tests)
        if ordinal == 2:
            return GARBAGE  # every attempt fails to parse
        return "Here: " + json.dumps({"post": f"  {LONG_POST}  ", "opinion": "Strongly Oppose", "confidence": 7,
                                      "reason": "r" * 300}) + " done"
    return json.dumps({"votes": [1, "maybe"]})  # short list, a non-integer


def test_engine_applies_the_lenient_handling_end_to_end():
    config = TrialSetup(trial_id="t", model_name="ollama_chat/stub-model", topic=get_topic("ai_labels"),
                         condition="likes", seed=SEED, n_agents=6, n_rounds=2,
                         protocol=protocol_from_preset("pvsst_reference"))
    with OllamaStub(messy_reply) as stub:
        gateway = Gateway(GatewayConfig(api_base=stub.api_base), max_retries=0, sleep=no_wait)
        try:
            result = run_trial(config, gateway)
        finally:
            gateway.close()
    posts = result.posts.set_index(["round", "agent_id"])
    initial = result.agents.set_index("agent_id")["initial_stance"]
    for round in (0, 1):
        assert posts.loc[(round, "a01"), "text"] == "(generation failed)"
        assert posts.loc[(round, "a02"), "text"] == GARBAGE
        for agent in ("a01", "a02"):
            assert posts.loc[(round, agent), "stance"] == initial[agent]
            assert not posts.loc[(round, agent), "parse_ok"]
        for agent in ("a00", "a03", "a04", "a05"):
            assert posts.loc[(round, agent), "text"] == "x" * 180  # stripped, cut to post_char_limit
            assert posts.loc[(round, agent), "stance"] == -2  # "Strongly Oppose" snaps to "oppose"
            assert posts.loc[(round, agent), "confidence"] == 1.0  # clamped
            assert posts.loc[(round, agent), "parse_ok"]
    garbage_attempts = [b for b in stub.bodies if is_post(b) and b["options"]["seed"] % 500 == 2]
    assert len(garbage_attempts) == 2 * 3 and len({b["options"]["seed"] for b in garbage_attempts}) == 2
    failed_tries = [b for b in stub.bodies if is_post(b) and b["options"]["seed"] % 500 == 1]
    assert len(failed_tries) == 2 * 3  # the reference's transport tries: 3 per call, then (generation failed)
    # one vote per ballot: the first value; "maybe" is skipped and nothing else was given
    votes = result.votes
    assert (votes.groupby(["round", "voter_id"]).size() == 1).all()
    assert set(votes["value"]) == {1} and votes["parse_ok"].all()
    assert len(votes) == 2 * 6
