"""Survey elicitation beyond sampling: logprobs and verbalized distributions, scored like sampled answers.

Scripted controls and a stub OpenAI-compatible server on 127.0.0.1 stand in for models, so every value
here is computed exactly: a control's distribution is known in closed form, and the stub's log-
probabilities are written in the test.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import yaml
from builders import GSS, small_instrument
from cli_checks import refused
from gateway_stub import StubServer, raw
from scipy.spatial.distance import jensenshannon
from survey_helpers import write

from pvsst.experiments.cli import main
from pvsst.experiments.survey.elicitation import reply_answer
from pvsst.experiments.survey.spec import canonical_survey, load_survey
from pvsst.sim.llm.config import GatewayConfig
from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.llm.option_probabilities import distribution_from_top_logprobs
from pvsst.sim.llm.providers.registry import logprobs_problem
from pvsst.sim.llm.types import LLMRequest

CODES = ["too_little", "about_right", "too_much"]


def run_spec(tmp_path, spec: dict, *extra: str):
    path = write(tmp_path, spec)
    out = tmp_path / "run"
    code = main(["survey", "run", str(path), "--out", str(out), "--n", "6", "--personas", "respondents", *extra])
    return code, out


def responses(out) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(p) for p in sorted(out.glob("units/*/responses.parquet"))], ignore_index=True)


def tok(token: str, p: float, alternatives: dict[str, float] | None = None) -> dict:
    return {"token": token, "logprob": math.log(p),
            "top_logprobs": [{"token": t, "logprob": math.log(q)} for t, q in (alternatives or {token: p}).items()]}


def test_top_logprobs_walk_resolves_codes_that_share_their_first_token():
    # "too" starts too_little and too_much: their split is read at the next token, on the generated path.
    content = [tok('{"', 1.0), tok("answer", 1.0), tok('":', 1.0),
               tok(' "', 1.0),
               tok("too", 0.6, {"too": 0.6, "about": 0.3, "maybe": 0.1}),
               tok("_", 1.0),
               tok("much", 0.75, {"much": 0.75, "little": 0.25}),
               tok('"}', 1.0)]
    probabilities = distribution_from_top_logprobs(content, CODES)
    # too_much 0.6 * 0.75, too_little 0.6 * 0.25, about_right 0.3; "maybe" fits no code: renormalised over 0.9
    expected = {"too_little": 0.15 / 0.9, "about_right": 0.3 / 0.9, "too_much": 0.45 / 0.9}
    assert probabilities == pytest.approx(expected, abs=1e-12)
    assert math.isclose(sum(probabilities.values()), 1.0, abs_tol=1e-12)
    # the answer's opening quote glued to the first letters (' "too') is read the same way
    glued = content[:3] + [tok(' "too', 0.6, {' "too': 0.6, ' "about': 0.3})] + content[5:]
    assert distribution_from_top_logprobs(glued, CODES) == pytest.approx(expected_glued := {
        "too_little": 0.15 / 0.9, "about_right": 0.3 / 0.9, "too_much": 0.45 / 0.9}, abs=1e-12), expected_glued
    with pytest.raises(ValueError, match="no \"answer\" value"):
        distribution_from_top_logprobs([tok("hello", 1.0)], CODES)


def test_a_litellm_provider_is_asked_for_top_logprobs_and_its_tokens_become_the_distribution(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    content = [tok('{"answer": "', 1.0), tok("about", 0.5, {"about": 0.5, "too": 0.4}),
               tok("_right", 1.0), tok('"}', 1.0)]
    body = {"id": "x", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": {"content": content},
                         "message": {"role": "assistant", "content": '{"answer": "about_right"}'}}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 6, "total_tokens": 36}}
    request = LLMRequest(model_name="openai/gpt-4o-mini", messages=({"role": "user", "content": "q"},), seed=3,
                         schema={"type": "object", "properties": {"answer": {"enum": CODES}}},
                         option_scoring=tuple(CODES), temperature=0.0)
    with StubServer([raw(json.dumps(body))]) as stub:
        with Gateway(GatewayConfig(api_base=stub.api_base, request_timeout_s=60.0), max_retries=0) as gateway:
            result = gateway.run([request])[0]
    assert stub.requests == 1, result.record  # one call per persona x question
    sent = stub.bodies[0]
    assert sent["logprobs"] is True and sent["top_logprobs"] == 20
    # "too" (0.4) fits too_little and too_much and is not on the generated path: split equally
    assert result.ok and result.parsed["probabilities"] == pytest.approx(
        {"too_little": 0.2 / 0.9, "about_right": 0.5 / 0.9, "too_much": 0.2 / 0.9}, abs=1e-12)


def test_which_providers_can_give_logprobs():
    assert logprobs_problem("embedded/smollm2-135m") == ""
    assert logprobs_problem("openai/gpt-4o-mini") == "" and logprobs_problem("hosted_vllm/any") == ""
    assert logprobs_problem("scripted/oracle") == "" and logprobs_problem("scripted/uniform") == ""
    assert "no token log-probabilities" in logprobs_problem("ollama/llama3")
    assert "no option probabilities" in logprobs_problem("scripted/echo")


@pytest.mark.parametrize("model", ["ollama/llama3", "scripted/echo", "anthropic/claude-3-5-sonnet-20240620"])
def test_logprobs_on_a_provider_without_them_exits_2_before_anything(tmp_path, capsys, model):
    path = tmp_path / "survey.yaml"
    spec = small_instrument(model=model, conditions=["direct", "direct_logprobs"], analysis={"min_group_n": 2})
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    # freezing refuses it (no lock is written), and so does a run given a deviation
    assert main(["prereg", "freeze", str(path)]) == 2
    assert not list(tmp_path.glob("*.lock.json"))
    capsys.readouterr()
    out = tmp_path / "run"
    err = refused(capsys, ["survey", "run", str(path), "--out", str(out), "--n", "6", "--personas", "respondents",
                           "--deviation", "not freezable"])
    assert "conditions[direct_logprobs].elicitation" in err and model in err
    assert not out.exists()  # refused before any call and before anything was written


def test_controls_answer_every_method_and_are_scored_alike(tmp_path, capsys):
    spec = small_instrument(model="scripted/marginal", conditions=["direct", "direct_logprobs", "direct_verbalized"],
                            analysis={"min_group_n": 2},
                            sampling={"temperature": 0.7, "samples_per_persona": 3, "max_tokens": 24,
                                      "max_attempts": 3})
    code, out = run_spec(tmp_path, spec)
    assert code == 0, capsys.readouterr()
    frame = responses(out)
    # one call per persona x question for the distribution methods, samples_per_persona for sampling
    calls = frame.groupby(["provider", "condition", "elicitation"]).size().to_dict()
    assert calls[("scripted/marginal", "direct", "sample")] == 6 * 2 * 3
    for provider in ("scripted/marginal", "scripted/oracle", "scripted/uniform"):
        for condition, method in (("direct_logprobs" if provider == "scripted/marginal" else "reference_logprobs",
                                   "logprobs"),
                                  ("direct_verbalized" if provider == "scripted/marginal" else "reference_verbalized",
                                   "verbalized")):
            assert calls[(provider, condition, method)] == 6 * 2
    distributions = frame[frame["elicitation"] != "sample"]
    assert distributions["parse_ok"].all()
    parsed = distributions.assign(p=distributions["probabilities"].map(json.loads))
    assert parsed["p"].map(lambda d: abs(sum(d.values()) - 1) < 1e-9).all()
    uniform = parsed[parsed["provider"] == "scripted/uniform"]["p"]
    assert uniform.map(lambda d: all(abs(v - 1 / 3) < 1e-12 for v in d.values())).all()
    oracle = parsed[parsed["provider"] == "scripted/oracle"]
    assert oracle["p"].map(lambda d: sorted(d.values()) == [0.0, 0.0, 1.0]).all()
    assert (oracle["answer"] == oracle["p"].map(lambda d: max(d, key=d.get))).all()

    assert main(["survey", "score", str(out)]) == 0
    capsys.readouterr()
    table = pd.read_csv(out / "analysis" / "fidelity.csv")
    assert set(table["elicitation"]) == {"sample", "logprobs", "verbalized"}
    js = table[(table["metric"] == "js_distance") & (table["group"] == "all")].set_index(
        ["provider", "condition", "question"])["value"]
    human = pd.read_parquet(out / "human.parquet")
    for question in ("natenvir", "natheal"):
        shares = human[question].value_counts(normalize=True).reindex(CODES).to_numpy()
        # the marginal's distribution is the human marginal: distance 0; uniform's is computed directly
        assert js[("scripted/marginal", "direct_logprobs", question)] == pytest.approx(0.0, abs=1e-6)
        assert js[("scripted/uniform", "reference_verbalized", question)] == pytest.approx(
            jensenshannon(shares, np.full(3, 1 / 3), base=2), abs=1e-6)
        # the oracle's point masses are its sampled answers: the same score under every method
        assert js[("scripted/oracle", "reference_logprobs", question)] == pytest.approx(
            js[("scripted/oracle", "reference", question)], abs=1e-12)


def test_verbalized_replies_are_validated_and_renormalised():
    assert reply_answer({"probabilities": {"a": 0.5, "b": 0.5, "c": 1.0}}, "verbalized") == (
        "c", json.dumps({"a": 0.25, "b": 0.25, "c": 0.5}))
    assert reply_answer({"probabilities": {"a": 0.0, "b": 0.0}}, "logprobs") == (None, None)
    assert reply_answer({"answer": "a"}, "verbalized") == (None, None)  # no distribution in the reply


def test_sample_only_instruments_hash_as_before():
    # the elicitation key is left out of the canonical form when it is "sample" (earlier runs replay)
    assert all("elicitation" not in c for c in canonical_survey(load_survey(GSS))["conditions"])
