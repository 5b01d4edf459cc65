"""Many model servers behind `execution.endpoints` (litellm's Router), structured output that
fits the server, and runs whose calls failed that do not look like successes.

The stub servers answer with the scripted null model behind HTTP (`gateway_stub.imitate_reply`): a
reply is a function of the request (messages, seed), so which endpoint served must not matter.
"""
from __future__ import annotations

import json

import pandas as pd
import pytest
from gateway_stub import StubServer, http_error, imitate_reply, ok
from runner_helpers import assert_same_run_store, trial_dirs
from served_study import served_spec

from pvsst.experiments.cli import main
from pvsst.experiments.spec.estimate import estimate
from pvsst.experiments.spec.study import load_spec

MODEL = "openai/imitate"


def _manifest(run) -> dict:
    return json.loads((run / "manifest.json").read_text())


def _calls(run) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(d / "llm_calls.parquet") for d in trial_dirs(run).values()])


@pytest.mark.slow
def test_three_endpoints_one_dies_mid_run_equals_one_endpoint(tmp_path, capfd):
    with StubServer(reply=imitate_reply) as single:
        spec = served_spec(tmp_path, MODEL, {"api_base": single.api_base, "max_concurrency": 4,
                                              "structured_output": "json_schema"}, name="one.yaml")
        assert main(["run", str(spec), "--out", str(tmp_path / "one")]) == 0, capfd.readouterr()
    n_calls = estimate(load_spec(spec)).calls
    assert n_calls == 4 * 2 * (4 + 4)  # 4 trials x 2 rounds x (4 posts + 4 votes)

    with StubServer(reply=imitate_reply) as a, StubServer(reply=imitate_reply, stop_after=6) as b, \
            StubServer(reply=imitate_reply) as c:
        endpoints = [{"api_base": a.api_base}, {"api_base": b.api_base, "weight": 2},
                     {"api_base": c.api_base, "max_concurrency": 2}]
        # a fixed mode: under auto each endpoint is first asked directly, which adds requests to count
        spec = served_spec(tmp_path, MODEL, {"endpoints": endpoints, "max_concurrency": 4,
                                             "structured_output": "json_schema"}, name="many.yaml")
        code = main(["run", str(spec), "--out", str(tmp_path / "many")])
        out = capfd.readouterr().out
    assert code == 0, out
    assert "4 trials: 4 done, 0 failed" in out
    assert b.stopped and b.requests == 6

    manifest = _manifest(tmp_path / "many")
    assert {t["status"] for t in manifest["trials"].values()} == {"done"}
    served = manifest["model_calls"]["endpoints"]
    calls = _calls(tmp_path / "many")
    provider_calls = int((~calls["cached"]).sum())
    # every provider call is counted at the endpoint that served it; the dead one served its 6 only
    assert sum(served.values()) == provider_calls == a.requests + 6 + c.requests
    assert served[b.api_base] == 6 and served[a.api_base] == a.requests and served[c.api_base] == c.requests
    assert manifest["model_calls"]["failovers"] >= 1  # requests routed to b after it died moved on
    assert int(calls["failovers"].sum()) == manifest["model_calls"]["failovers"]
    assert set(calls.loc[~calls["cached"], "endpoint"]) == {a.api_base, b.api_base, c.api_base}
    assert (calls["status"] == "ok").all()
    # the request seed travelled with every request, whichever endpoint took it
    sent = sorted(s for server in (a, b, c) for s in server.seeds)
    assert sent == sorted(calls.loc[~calls["cached"], "request_seed"].astype(int))
    assert_same_run_store(tmp_path / "one", tmp_path / "many")


def test_client_errors_are_tried_once_and_the_trials_are_degraded(tmp_path, capfd):
    with StubServer([http_error(400)]) as stub:  # a fixed mode: auto would probe the other modes first
        spec = served_spec(tmp_path, MODEL, {"api_base": stub.api_base, "structured_output": "json_schema"},
                           n_agents=3, n_rounds=1)
        code = main(["run", str(spec), "--out", str(tmp_path / "run")])
    out = capfd.readouterr().err  # a run that did not succeed says so on stderr
    manifest = _manifest(tmp_path / "run")
    calls = _calls(tmp_path / "run")
    assert len(calls) == 4 * (3 + 3) and stub.requests == len(calls)  # each call tried once
    assert (calls["status"] == "error").all() and (calls["attempts"] == 1).all()
    assert code == 1
    assert {t["status"] for t in manifest["trials"].values()} == {"degraded"}
    assert all(t["failed_share"] == 1.0 for t in manifest["trials"].values())
    for trial_id in manifest["trials"]:
        assert f"degraded {trial_id}: 100.0% of 6 calls failed (threshold 5.0%)" in out
    assert "4 trials: 0 done, 4 degraded, 0 failed" in out
    # resuming does not turn them into successes
    assert main(["run", str(spec), "--out", str(tmp_path / "run")]) == 1
    assert "4 degraded" in capfd.readouterr().err
    # and the report's audit says so
    assert main(["report", str(tmp_path / "run"), "--figures", "png", "--format", "md",
                 "--homophily-replicates", "2"]) == 0, capfd.readouterr()
    report = next((tmp_path / "run" / "report").glob("*.md")).read_text()
    assert "4 trial(s) degraded" in report and "(100.0% of 6)" in report


def test_auto_steps_down_once_per_endpoint_until_the_server_accepts(tmp_path, capfd):
    """A server that takes only llama.cpp's `json_object` form: auto sends json_schema once, is
    rejected (400), and every later call goes out as json_object; the mode is in the manifest."""
    class OnlyJsonObject(StubServer):
        def _begin(self, body):
            step = super()._begin(body)
            kind = (body.get("response_format") or {}).get("type")
            return http_error(400) if kind == "json_schema" else step

    with OnlyJsonObject(reply=imitate_reply) as stub:
        spec = served_spec(tmp_path, MODEL, {"api_base": stub.api_base, "structured_output": {MODEL: "auto"}},
                           n_agents=3, n_rounds=1, seeds=(101,))
        assert main(["run", str(spec), "--out", str(tmp_path / "run")]) == 0, capfd.readouterr()
        kinds = [(b.get("response_format") or {}).get("type") for b in stub.bodies]
    calls = _calls(tmp_path / "run")
    provider_calls = calls[~calls["cached"]]
    assert len(calls) == 2 * 6 and len(provider_calls) >= 6
    assert kinds.count("json_schema") == 1 and kinds.count("json_object") == len(provider_calls)
    assert set(provider_calls["structured_output"]) == {"json_object"} and (calls["status"] == "ok").all()
    assert provider_calls["attempts"].tolist() == [2] + [1] * (len(provider_calls) - 1)  # the rejected try counts
    assert _manifest(tmp_path / "run")["model_calls"]["structured_output"] == {
        f"{MODEL} @ {stub.api_base}": "json_object"}


@pytest.mark.parametrize("lines, field, problem", [
    ("  api_base: http://127.0.0.1:9/v1\n", "execution.endpoints", "not both"),
    ("  structured_output: jsonx\n", "execution.structured_output", "unknown structured-output mode 'jsonx'"),
    ("  structured_output: {other/model: auto}\n", "execution.structured_output.other/model", "not in factors.models"),
    ("  structured_output: {openai/imitate: autox}\n", "execution.structured_output.openai/imitate", "'autox'"),
])
def test_bad_execution_settings_are_one_line_input_errors(tmp_path, capfd, lines, field, problem):
    good = served_spec(tmp_path, MODEL, {"endpoints": [{"api_base": "http://127.0.0.1:10/v1"},
                                                       {"api_base": "http://127.0.0.1:11/v1", "weight": 3}]})
    path = tmp_path / "bad.yaml"
    path.write_text(good.read_text().replace("execution:\n", "execution:\n" + lines))
    code = main(["run", str(path), "--out", str(tmp_path / "run"), "--deviation", "test"])
    err = capfd.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert f"bad.yaml: {field}: " in err and problem in err
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
@pytest.mark.embedded
@pytest.mark.parametrize("setting", [{"structured_output": {"openai/smollm2": "auto"}}, {}],
                         ids=["auto", "no_setting"])
def test_two_trial_study_against_llama_cpp_server(tmp_path, capfd, setting):
    """llama-cpp-python's own server rejects `json_schema` (a 500 carrying its request validation
    error); `auto`, set or (for a served model) the default, moves to `json_object` on the first call,
    and no call fails."""
    pytest.importorskip("uvicorn", reason="llama-cpp-python's server extra: pip install 'pvsst[dev]'")
    from served_study import LlamaServer

    with LlamaServer() as server:
        spec = served_spec(tmp_path, "openai/smollm2", {"api_base": server.api_base, "max_concurrency": 2, **setting},
                           n_agents=3, n_rounds=1, seeds=(101,))
        code = main(["run", str(spec), "--out", str(tmp_path / "run")])
    out = capfd.readouterr().out
    assert code == 0, out
    assert "2 trials: 2 done, 0 failed" in out
    calls = _calls(tmp_path / "run")
    assert len(calls) == 12 and (calls["status"] == "ok").all()
    provider_calls = calls[~calls["cached"]]
    assert set(provider_calls["structured_output"]) == {"json_object"}
    # json_schema is rejected once (that call's first attempt); json_object constrains to JSON but not to
    # the schema, so a reply outside it (an opinion off the scale) may take a second attempt: no call fails.
    attempts = sorted(provider_calls["attempts"])
    assert attempts[-1] >= 2 and attempts[0] == 1 and max(attempts) <= 3, attempts
    posts = pd.concat([pd.read_parquet(d / "posts.parquet") for d in trial_dirs(tmp_path / "run").values()])
    assert len(posts) == 6 and posts["parse_ok"].all()
    manifest = _manifest(tmp_path / "run")
    assert manifest["model_calls"]["structured_output"] == {f"openai/smollm2 @ {server.api_base}": "json_object"}
    assert {t["status"] for t in manifest["trials"].values()} == {"done"}


@pytest.mark.slow
@pytest.mark.embedded
def test_llama_cpp_server_and_two_stubs_behind_endpoints_one_stub_dies(tmp_path, capfd):
    """Structured output that fits each server, with a real server among the three: each endpoint settles on
    its own mode."""
    pytest.importorskip("uvicorn", reason="llama-cpp-python's server extra: pip install 'pvsst[dev]'")
    from served_study import LlamaServer

    with LlamaServer() as server, StubServer(reply=imitate_reply) as a, \
            StubServer(reply=imitate_reply, stop_after=2) as b:
        # auto probes each endpoint with the first request, in this order: the llama server's reply
        # is the first call's; the stubs' replies to it only teach their modes. b dies after 2. The
        # Router picks at random by weight: b's weight makes it all but sure (1 - 0.27**5) that one of
        # the five calls after the probe reaches b while it still answers.
        endpoints = [{"api_base": server.api_base, "weight": 0.5, "max_concurrency": 1},
                     {"api_base": a.api_base}, {"api_base": b.api_base, "weight": 4.0}]
        spec = served_spec(tmp_path, "openai/smollm2", {
            "endpoints": endpoints, "max_concurrency": 3, "structured_output": "auto"},
            n_agents=3, n_rounds=1, seeds=(101,), conditions=("control", "likes"))
        code = main(["run", str(spec), "--out", str(tmp_path / "run")])
    out = capfd.readouterr().out
    assert code == 0, out
    manifest = _manifest(tmp_path / "run")
    assert {t["status"] for t in manifest["trials"].values()} == {"done"}
    calls = _calls(tmp_path / "run")
    assert len(calls) == 12 and (calls["status"] == "ok").all()
    served = manifest["model_calls"]["endpoints"]
    assert b.stopped and b.requests == 2 and served.get(b.api_base, 0) == 1  # its probe reply was not used
    assert served.get(a.api_base, 0) == a.requests - 1
    assert served[server.api_base] >= 1
    assert sum(served.values()) == int((~calls["cached"]).sum())
    # The first call probes: llama rejects json_schema, answers json_object (its reply is used); then a
    # and b are asked once each to learn their modes.
    first = calls.iloc[0]
    assert (first["phase"], first["agent_id"]) == ("post", "a00")
    assert (first["attempts"], first["endpoint"], first["structured_output"]) == (4, server.api_base, "json_object")
    # The llama server rejected exactly one request, the probe's json_schema form: every later request it
    # got went straight to json_object. Which requests the Router sent it depends on timing, and a reply
    # of its outside the schema takes another attempt (json_object constrains to JSON, not to the
    # schema: see the test above), so it may have answered more requests than it served calls.
    statuses = server.statuses()
    assert statuses[500] == 1 and statuses[200] >= served[server.api_base], statuses
    assert set(statuses) <= {200, 500}, statuses
    modes = manifest["model_calls"]["structured_output"]
    assert modes[f"openai/smollm2 @ {server.api_base}"] == "json_object"
    assert modes.get(f"openai/smollm2 @ {a.api_base}", "json_schema") == "json_schema"


class _OnlyJsonObject(StubServer):
    """A server that rejects OpenAI's `json_schema` form with a 400 (as llama.cpp's does, with a 500)."""

    def _begin(self, body):
        step = super()._begin(body)
        return http_error(400) if (body.get("response_format") or {}).get("type") == "json_schema" else step


def test_router_hook_sets_the_mode_per_endpoint_and_learns_from_a_rejection():
    """Through the Router itself: the deployment hook sends each endpoint the mode learned for it; the
    failure hook moves the rejecting endpoint to json_object; the rejected request is not tried on the other
    endpoint by the Router (a client error), the gateway sends it again in the new mode."""
    import asyncio

    from pvsst.sim.llm.config import Endpoint
    from pvsst.sim.llm.endpoints import EndpointPool
    from pvsst.sim.llm.structured_modes import StructuredModes

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    with _OnlyJsonObject([ok('{"n": 1}')]) as strict, StubServer([ok('{"n": 2}')]) as lenient:
        modes = StructuredModes({MODEL: "auto"})
        pool = EndpointPool([Endpoint(api_base=strict.api_base, weight=9), Endpoint(api_base=lenient.api_base)], modes)

        rejected = []

        async def call(i):
            try:
                return await pool.acompletion(schema, model=MODEL, messages=[{"role": "user", "content": f"{i}"}],
                                              seed=i, max_retries=0, timeout=10)
            except Exception as err:  # the rejection is not tried elsewhere: the gateway sends it again
                rejected.append(getattr(err, "status_code", None))
                return await call(i)

        async def calls():  # the Router picks endpoints at random by weight: go on until both were reached
            results = []
            for i in range(400):
                results.append(await call(i))
                if len(strict.bodies) >= 2 and lenient.bodies:
                    return results
            raise AssertionError("400 calls and the weighted Router never reached both endpoints")

        routed = [where for _, where in asyncio.run(calls())]
    kinds = [(b.get("response_format") or {}).get("type") for b in strict.bodies]
    assert kinds[0] == "json_schema" and set(kinds[1:]) == {"json_object"} and len(kinds) >= 2
    assert {(b.get("response_format") or {}).get("type") for b in lenient.bodies} == {"json_schema"}
    assert modes.mode_for(MODEL, strict.api_base) == "json_object"
    assert modes.mode_for(MODEL, lenient.api_base) == "json_schema"
    assert {(r.endpoint, r.mode) for r in routed} <= {(strict.api_base, "json_object"), (lenient.api_base,
                                                                                         "json_schema")}
    assert rejected == [400]  # one rejection (of json_schema by the strict server), not tried on the other


def test_per_endpoint_concurrency_is_a_cap_that_requests_wait_for():
    """litellm's Router refuses a request when an endpoint's max_parallel_requests are all in use (a
    429); the gateway keeps no more in flight than the endpoints take together and waits for a slot,
    so no call burns a retry on it."""
    from pvsst.sim.llm.config import Endpoint, GatewayConfig
    from pvsst.sim.llm.gateway import Gateway
    from pvsst.sim.llm.types import LLMRequest

    with StubServer([ok("x", delay_s=0.2)]) as a, StubServer([ok("y", delay_s=0.2)]) as b:
        endpoints = [Endpoint(api_base=a.api_base, max_concurrency=1), Endpoint(api_base=b.api_base, max_concurrency=2)]
        with Gateway(GatewayConfig(endpoints=endpoints, max_concurrency=8)) as gateway:
            assert gateway.max_concurrency == 3
            results = gateway.run([LLMRequest(model_name=MODEL, messages=({"role": "user", "content": f"q{i}"},),
                                              seed=i)
                                   for i in range(12)])
    assert [r.record.status for r in results] == ["ok"] * 12
    assert [r.record.attempts for r in results] == [1] * 12
    assert a.max_in_flight == 1 and b.max_in_flight <= 2 and a.requests + b.requests == 12
    assert {r.record.endpoint for r in results} == {a.api_base, b.api_base}


def test_a_500_carrying_the_servers_request_validation_error_is_not_retried():
    """llama-cpp-python's server answers a `json_schema` response_format with HTTP 500 and pydantic's
    validation error (measured: `Input should be 'text' or 'json_object'`): the same every time, so
    one try, recorded as a client error; a plain 500 is still retried."""
    from gateway_stub import Step

    from pvsst.sim.llm.config import GatewayConfig
    from pvsst.sim.llm.gateway import Gateway
    from pvsst.sim.llm.types import LLMRequest

    message = ("1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
               "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}")
    rejected = Step("status", status=500, body=json.dumps({"error": {"message": message,
                                                                     "type": "internal_server_error"}}))
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    request = LLMRequest(model_name=MODEL, messages=({"role": "user", "content": "x"},), schema=schema, seed=1)
    with StubServer([rejected]) as stub, Gateway(GatewayConfig(api_base=stub.api_base, structured_output="json_schema"),
                                                 backoff_base_s=0.01) as gateway:  # fixed: no probing
        (result,) = gateway.run([request])
    assert stub.requests == 1 and result.record.attempts == 1 and result.record.status == "error"
    assert "validation error" in result.record.error and result.record.structured_output == "json_schema"
    with StubServer([http_error(500), ok('{"n": 2}')]) as stub, \
            Gateway(GatewayConfig(api_base=stub.api_base), backoff_base_s=0.01) as gateway:
        (result,) = gateway.run([request])
    assert stub.requests == 2 and result.record.status == "ok" and result.parsed == {"n": 2}


@pytest.mark.parametrize("error, tried, served", [(400, 1, False), (503, 3, True)])
def test_a_rejected_request_is_not_tried_on_the_other_endpoints(error, tried, served):
    """With three endpoints, a client error (a 400: the request itself is wrong, so every server would
    refuse it) is sent once in all, not once per endpoint; a server error moves on to the others, and the
    call records how often it failed over."""
    from pvsst.sim.llm.config import Endpoint, GatewayConfig
    from pvsst.sim.llm.gateway import Gateway
    from pvsst.sim.llm.types import LLMRequest

    request = LLMRequest(model_name=MODEL, messages=({"role": "user", "content": "x"},), seed=1)
    with StubServer([http_error(error)]) as a, StubServer([http_error(error)]) as b, StubServer([ok("fine")]) as c:
        endpoints = [Endpoint(api_base=a.api_base, weight=1000.0), Endpoint(api_base=b.api_base, weight=1000.0),
                     Endpoint(api_base=c.api_base, weight=0.001)]  # c, the one that answers, is picked last
        with Gateway(GatewayConfig(endpoints=endpoints),
                     max_retries=0) as gateway:  # the gateway tries once; the Router moves
            (result,) = gateway.run([request])
    assert a.requests + b.requests + c.requests == tried
    assert result.record.attempts == 1
    if served:
        assert result.record.status == "ok" and result.record.endpoint == c.api_base and result.record.failovers == 2
    else:
        assert result.record.status == "error" and c.requests == 0
