"""The response cache: content addressing, several writer processes, zero provider calls on a hit,
replay-only misses, and the CLI cache across two processes."""
from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from gateway_stub import CountingEchoProvider

from pvsst.sim.llm.cache import ReplayMiss, ResponseCache
from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.llm.providers.registry import register_scripted_provider
from pvsst.sim.llm.types import LLMRequest
from pvsst.sim.prompts import post_schema

REPO = Path(__file__).resolve().parents[2]
SCHEMA = {"type": "object", "properties": {"post": {"type": "string", "maxLength": 40},
                                           "opinion": {"enum": ["support", "neutral", "oppose"]}},
          "required": ["post", "opinion"], "additionalProperties": False}


def user(text: str, model: str = "scripted/echo", **fields) -> LLMRequest:
    return LLMRequest(model_name=model, messages=({"role": "user", "content": text},), **fields)


@pytest.fixture()
def counting():
    register_scripted_provider("counting", "gateway_stub:CountingEchoProvider")
    CountingEchoProvider.calls = 0
    return CountingEchoProvider


def test_put_get_roundtrip_and_counters(tmp_path):
    cache = ResponseCache(tmp_path / "sub" / "c.sqlite")
    cache.put("k", {"model": "m", "text": "t", "parsed": {"b": 1, "a": [1, 2]}, "prompt_tokens": 3,
                    "completion_tokens": 4, "cost_usd": 0.5})
    got = cache.get("k")
    assert (got["model"], got["text"], got["parsed"], got["prompt_tokens"], got["completion_tokens"]) == (
        "m", "t", {"b": 1, "a": [1, 2]}, 3, 4)
    assert list(got["parsed"]) == ["b", "a"]  # key order of the reply is kept
    assert got["created"] > 1.7e9
    assert cache.get("missing") is None
    assert cache.stats() == {"path": str(tmp_path / "sub" / "c.sqlite"), "entries": 1, "repeated_keys": 0, "hits": 1,
                             "misses": 1, "writes": 1}
    assert cache._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    cache.close()


def test_two_writer_processes_at_once(tmp_path):
    path = tmp_path / "shared.sqlite"
    ResponseCache(path).close()  # create the schema first so both writers start on equal terms
    writer = textwrap.dedent("""
        import sys
        from pvsst.sim.llm.cache import ResponseCache
        cache = ResponseCache(sys.argv[1])
        tag = sys.argv[2]
        for i in range(300):
            cache.put(f"{tag}-{i}", {"model": "m", "text": f"{tag} reply {i}", "parsed": {"i": i}})
            assert cache.get(f"{tag}-{i}")["parsed"] == {"i": i}
        cache.close()
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [subprocess.Popen([sys.executable, "-c", writer, str(path), tag], env=env, stderr=subprocess.PIPE)
             for tag in ("a", "b")]
    errors = [p.communicate(timeout=120)[1].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    cache = ResponseCache(path)
    assert len(cache) == 600
    assert cache.get("a-123")["text"] == "a reply 123" and cache.get("b-299")["parsed"] == {"i": 299}


def _open_at_once(args) -> str:
    path, barrier = args
    barrier.wait()
    try:
        with ResponseCache(path) as cache:
            cache.put(f"k{os.getpid()}", {"model": "m", "text": "t"})
        return "ok"
    except Exception as err:  # reported back so the assertion shows what went wrong
        return repr(err)


def test_workers_opening_a_fresh_cache_at_the_same_moment_all_succeed(tmp_path):
    # The CI failure this guards against: pool workers creating the same new cache file at once got
    # "database is locked" from the switch to WAL (SQLite does not run the busy handler for it).
    # Before the fix, about 1 in 5 rounds of 8 released-together openers failed here.
    # One pool for every round: each round's barrier holds all 8 tasks at once, so each runs in its own
    # worker, and every round opens a new file (the race is between the openers, not the processes).
    ctx = multiprocessing.get_context("fork")
    failures = []
    with ctx.Manager() as manager, ctx.Pool(8) as pool:
        for round_ in range(15):
            path = str(tmp_path / f"fresh{round_}.sqlite")
            barrier = manager.Barrier(8)
            failures += [r for r in pool.map(_open_at_once, [(path, barrier)] * 8) if r != "ok"]
            with ResponseCache(path) as cache:
                assert len(cache) == 8, f"round {round_}: {len(cache)} of 8 writes landed"
    assert failures == []


def test_cache_hit_makes_zero_provider_calls(tmp_path, counting):
    requests = [user(f"post number {i}", model="scripted/counting", seed=i, schema=SCHEMA) for i in range(20)]
    with Gateway(cache=ResponseCache(tmp_path / "c.sqlite")) as first:
        fresh = first.run(requests)
    assert counting.calls == 20 and all(r.ok and not r.record.cached for r in fresh)
    with Gateway(cache=ResponseCache(tmp_path / "c.sqlite")) as second:
        replayed = second.run(requests)
        assert second.provider_tries == 0
    assert counting.calls == 20  # not one more
    assert [r.text for r in replayed] == [r.text for r in fresh]
    assert [r.parsed for r in replayed] == [r.parsed for r in fresh]
    assert all(r.record.cached and r.record.attempts == 0 and r.record.status == "ok" for r in replayed)
    assert [r.record.call_id for r in replayed] == [r.record.call_id for r in fresh]


def test_only_successful_replies_are_cached(tmp_path):
    # An empty user message makes echo reply with nothing: status "empty" after 3 attempts, not cached.
    cache = ResponseCache(tmp_path / "c.sqlite")
    with Gateway(cache=cache) as gateway:
        result = gateway.run([user("", seed=1)])[0]
        assert (result.record.status, result.record.attempts, result.extra["seeds"]) == ("empty", 3, [1, 2, 3])
        assert len(cache) == 0


def test_replay_only_miss_raises_before_any_call(tmp_path, counting):
    cache = ResponseCache(tmp_path / "c.sqlite")
    with Gateway(cache=cache) as warm:
        warm.run([user("cached one", model="scripted/counting", seed=1)])
    with Gateway(cache=ResponseCache(tmp_path / "c.sqlite"), replay_only=True) as replay:
        assert replay.run([user("cached one", model="scripted/counting", seed=1)])[0].record.cached
        with pytest.raises(ReplayMiss) as err:
            replay.run([user("cached one", model="scripted/counting", seed=1),
                        user("never seen", model="scripted/counting", seed=1)])
    message = str(err.value)
    assert "\n" not in message and "scripted/counting" in message
    assert user("never seen", seed=1).prompt_sha256()[:16] in message
    assert counting.calls == 1


def run_cli(*args: str, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PVSST_CACHE": str(cache)}
    return subprocess.run([sys.executable, "-m", "pvsst.experiments.cli", *args], env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("model", ["scripted/echo", "scripted/imitate"])
def test_cli_same_call_in_two_processes_is_identical_and_cached(tmp_path, model):
    # imitate answers the simulation's post schema; echo answers any schema.
    schema = post_schema(180) if model == "scripted/imitate" else SCHEMA
    schema_file = tmp_path / "schema.json"
    schema_file.write_text(json.dumps(schema))
    args = ("llm", "complete", "--model", model, "--schema", str(schema_file), "--seed", "7", "--json",
            "--prompt", "TOPIC: Should AI-generated content be labeled on social platforms?")
    first, second = run_cli(*args, cache=tmp_path / "c.sqlite"), run_cli(*args, cache=tmp_path / "c.sqlite")
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    one, two = json.loads(first.stdout), json.loads(second.stdout)
    assert one["text"] == two["text"] and one["parsed"] == two["parsed"]
    assert set(one["parsed"]) == set(schema["required"])
    assert one["parsed"]["opinion"] in schema["properties"]["opinion"]["enum"]
    assert (one["provenance"]["cached"], two["provenance"]["cached"]) == (False, True)
    assert (one["provenance"]["attempts"], two["provenance"]["attempts"]) == (1, 0)
    assert one["provenance"]["request_seed"] == 7 and one["provenance"]["call_id"] == two["provenance"]["call_id"]
    for key in ("status", "prompt_tokens", "completion_tokens", "latency_s"):
        assert key in two["provenance"]


def test_imitate_answers_any_schema_identically_across_processes(tmp_path):
    import jsonschema

    schema_file = tmp_path / "schema.json"
    schema_file.write_text(json.dumps(SCHEMA))
    args = ("llm", "complete", "--model", "scripted/imitate", "--schema", str(schema_file), "--seed", "7", "--json",
            "--prompt", "Describe provenance labels for synthetic media")
    first, second = run_cli(*args, cache=tmp_path / "c.sqlite"), run_cli(*args, cache=tmp_path / "c.sqlite")
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    one, two = json.loads(first.stdout), json.loads(second.stdout)
    jsonschema.validate(one["parsed"], SCHEMA)
    assert one["text"] == two["text"]
    assert (one["provenance"]["cached"], two["provenance"]["cached"]) == (False, True)
