"""Identity injection on the embedded SmolLM2 model: vectors measured from hidden states and added per call.

The vectors come from a planted pair of prompt sets: the same cards and questions, differing only in
the stated sex ("I am a woman / a man from ..."). Every test reads the model's answer distribution
for "man" and "woman" (logprobs elicitation) or a sampled reply.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from session_folder import session_folder

from pvsst.core.input_files import file_sha256
from pvsst.sim.identity.extraction import default_probes, extract_vectors, span_of
from pvsst.sim.identity.vectors import IdentityVectors, load_vectors, save_vectors
from pvsst.sim.llm.cache import ResponseCache
from pvsst.sim.llm.config import GatewayConfig
from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.llm.option_probabilities import from_logprobs
from pvsst.sim.llm.providers import embedded
from pvsst.sim.llm.providers.llama_cvec import set_control_vector
from pvsst.sim.llm.providers.llama_hidden import HiddenStateReader
from pvsst.sim.llm.steering import SCOPES, Steering
from pvsst.sim.llm.types import LLMRequest

pytestmark = pytest.mark.embedded
MODEL = "smollm2-135m"
PROBE = [{"role": "user", "content": "Are you a man or a woman? Answer with one word."}]
OPTIONS = ["man", "woman"]
SHORT = ({"role": "system", "content": "Answer in one word."}, {"role": "user", "content": "Man or woman?"})
LAYERS = (10, 11, 12, 13, 14)  # middle layers: steering there moves answers without breaking the text


def _table(places=("Ohio", "Texas", "Oregon")) -> pd.DataFrame:
    rows = [{"persona_id": f"{sex}-{place}", "sex": sex, "card": f"I am a {noun} from {place}."}
            for place in places for sex, noun in (("female", "woman"), ("male", "man"))]
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """Vectors of sex from 6 cards x 2 questions, stored for layers 8-16; the file and its sha256.
    Measured once per pytest session (a file lock: the xdist workers that run this module's tests share
    the file) and read back from it."""
    from filelock import FileLock

    path = session_folder(tmp_path_factory) / "identity-planted-sex.npz"
    sha_file = path.with_suffix(".sha256")  # what save_vectors returned; written last, so it marks the file done
    with FileLock(str(path.with_suffix(".lock"))):
        if not sha_file.is_file():
            vectors = extract_vectors(_table(), ["sex"], default_probes()[:2], model=MODEL, layers=range(8, 17),
                                      seed=1)
            sha_file.write_text(save_vectors(vectors, path))
    return load_vectors(path), path, sha_file.read_text()


def _steering(planted, value="female", **changes) -> Steering:
    _, path, sha = planted
    fields = dict(vectors=str(path), vectors_sha256=sha, attributes=(("sex", value),), layers=LAYERS, coef=2.0)
    return Steering(**{**fields, **changes})


def _p(logprobs: dict[str, float], option: str) -> float:
    odds = {k: np.exp(v) for k, v in logprobs.items()}
    return float(odds[option] / sum(odds.values()))


def test_a_vector_for_layer_i_moves_exactly_the_output_it_was_read_at():
    llama = embedded.load_model(MODEL)
    tokens = span_of(llama, PROBE, "prompt")[0]
    with HiddenStateReader(llama, [11, 12, 13, 29]) as reader:
        before = reader.read(tokens)
        assert before.shape == (4, len(tokens), 576)  # every token, the last block's too
        shift = np.random.default_rng(0).normal(0.0, 1.0, (1, 576)).astype(np.float32)
        set_control_vector(llama, shift, [12], context=reader.context)
        after = reader.read(tokens)
        set_control_vector(llama, None, context=reader.context)
        assert np.array_equal(reader.read(tokens), before)
    assert np.array_equal(after[0], before[0])  # block 11: untouched
    assert np.allclose(after[1] - before[1], shift, atol=1e-3)  # block 12: moved by the vector, at every token
    assert not np.allclose(after[2], before[2], atol=1e-3)  # later blocks see the change


def test_vectors_are_differences_from_the_mean(planted):
    vectors, path, sha = planted
    assert vectors.header["attributes"] == {"sex": {"female": {"personas": 3, "prompts": 6},
                                                    "male": {"personas": 3, "prompts": 6}}}
    assert vectors.header["model_sha256"] == embedded.model_sha256(MODEL) and sha == file_sha256(path)
    # two values with equal counts: the two vectors are opposite, and not zero
    female, male = vectors.vector("sex", "female"), vectors.vector("sex", "male")
    assert np.allclose(female, -male, atol=1e-5) and np.linalg.norm(female[2]) > 0.5


def test_planted_direction_moves_the_matching_answer_monotonically(planted, show):
    curves = {}
    for value, option in (("female", "woman"), ("male", "man")):
        curves[value] = [_p(embedded.option_logprobs(MODEL, PROBE, OPTIONS, _steering(planted, value, coef=coef))
                            ["logprobs"], option) for coef in (0.0, 1.0, 2.0, 4.0)]
    show("\nP(matching answer) at coef 0, 1, 2, 4 (layers 10-14):")
    for value, curve in curves.items():
        show(f"  {value:6s} vector: " + "  ".join(f"{p:.3f}" for p in curve))
    for curve in curves.values():
        assert all(later > earlier for earlier, later in zip(curve, curve[1:])), curves
    assert curves["female"][-1] > 0.5 > curves["female"][0]  # the answer turns over


@pytest.mark.slow
def test_zero_is_zero_bit_for_bit(planted, tmp_path):
    vectors, _, _ = planted
    zeros = IdentityVectors(vectors.header, np.zeros_like(vectors.vectors))
    zero_path = tmp_path / "zeros.npz"
    zero_sha = save_vectors(zeros, zero_path)
    scale = [{"role": "user", "content": "I am a woman from Ohio.\n\nHow happy are you, from 1 (not at all) to 5 "
                                         "(very)? Answer with the number."}]
    codes = ["1", "2", "3", "4", "5"]
    unsteered = embedded.option_logprobs(MODEL, scale, codes)["logprobs"]
    for scope in SCOPES:
        for steering in (_steering(planted, coef=0.0, scope=scope),
                         _steering(planted, vectors=str(zero_path), vectors_sha256=zero_sha, coef=3.0, scope=scope)):
            assert embedded.option_logprobs(MODEL, scale, codes, steering)["logprobs"] == unsteered, (scope, steering)
    assert embedded.option_logprobs(MODEL, scale, codes)["logprobs"] == unsteered  # nothing left behind
    reply = dict(temperature=0.9, max_tokens=8, seed=5, schema=None)
    text = embedded.generate(MODEL, scale, **reply)["text"]
    for scope in SCOPES:
        assert embedded.generate(MODEL, scale, **reply, steering=_steering(planted, coef=0.0,
                                                                           scope=scope))["text"] == text


@pytest.mark.slow
def test_same_seed_same_vectors_and_answers(planted, tmp_path):
    table = _table(("Ohio", "Maine", "Iowa", "Utah"))
    # two of the eight personas a run (one prompt each): what is compared is the draw, not its size
    runs = [extract_vectors(table, ["sex"], default_probes()[:3], model=MODEL, layers=[10, 11], seed=seed,
                            n_personas=2, questions_per_persona=1) for seed in (3, 3, 4)]
    shas = [save_vectors(run, tmp_path / f"{i}.npz") for i, run in enumerate(runs)]
    assert shas[0] == shas[1] != shas[2]
    assert runs[0].header["persona_ids"] != runs[2].header["persona_ids"]  # the seed draws the sample
    noisy = [_steering(planted, noise_sigma=0.5, noise_seed=seed) for seed in (7, 7, 8)]
    answers = [embedded.option_logprobs(MODEL, PROBE, OPTIONS, s)["logprobs"] for s in noisy]
    assert answers[0] == answers[1] != answers[2]


def test_each_scope_steers_its_own_tokens(planted):
    """Each scope steers another set of tokens (under logprobs, ``response`` steers only the answer
    opening ``{"answer": "``, the end of which the distribution is read at), so each gives its own
    distribution, and each moves it toward the planted value."""
    results = {scope: embedded.option_logprobs(MODEL, PROBE, OPTIONS, _steering(planted, coef=4.0, scope=scope))
               ["logprobs"] for scope in SCOPES}
    unsteered = embedded.option_logprobs(MODEL, PROBE, OPTIONS)["logprobs"]
    assert len({tuple(r.values()) for r in results.values()} | {tuple(unsteered.values())}) == 4
    assert all(_p(r, "woman") > _p(unsteered, "woman") for r in results.values()), (results, unsteered)


@pytest.mark.slow
def test_64_concurrent_steered_calls_equal_the_same_calls_one_at_a_time(planted):
    requests = []  # a short prompt (no default system text): 128 calls
    for index in range(64):
        steering = None if index % 8 == 7 else _steering(
            planted, ("female", "male")[index % 2], coef=1.0 + index % 3, noise_sigma=0.3, noise_seed=index,
            scope=SCOPES[index % 3])
        requests.append(LLMRequest(model_name=f"embedded/{MODEL}", messages=SHORT, option_scoring=tuple(OPTIONS),
                                   schema={"type": "object"}, temperature=0.0, seed=index, steering=steering,
                                   agent_id=f"p{index}"))
    with Gateway(GatewayConfig(max_concurrency=16)) as gateway:
        together = gateway.run(requests)
        alone = [gateway.run([request])[0] for request in reversed(requests)][::-1]
    assert all(r.ok for r in together + alone)
    assert [r.parsed for r in together] == [r.parsed for r in alone]
    distinct = {tuple(sorted(r.parsed["probabilities"].items())) for r in together}
    assert len(distinct) > 32  # the personas' vectors differ, and so do their answers
    unsteered = from_logprobs(embedded.option_logprobs(MODEL, list(SHORT), OPTIONS)["logprobs"])
    plain = [r.parsed["probabilities"] for q, r in zip(requests, together) if q.steering is None]
    assert len(plain) == 8 and all(p == unsteered for p in plain)  # no vector leaked into an unsteered call


@pytest.mark.slow
def test_a_sampled_steered_call_through_the_gateway_is_cached_under_its_steering(planted, tmp_path):
    """The steering travels through litellm to the embedded handler; the cache keeps steered and
    unsteered replies apart and replays each."""
    schema = {"type": "object", "properties": {"answer": {"type": "string", "enum": OPTIONS}}, "required": ["answer"]}
    base = LLMRequest(model_name=f"embedded/{MODEL}", messages=tuple(PROBE), schema=schema, temperature=0.0,
                      max_tokens=16, seed=3)
    requests = [base, dataclasses.replace(base, steering=_steering(planted, coef=0.0)),
                dataclasses.replace(base, steering=_steering(planted, "female", coef=4.0)),
                dataclasses.replace(base, steering=_steering(planted, "male", coef=4.0))]
    with Gateway(GatewayConfig(max_concurrency=4), cache=ResponseCache(tmp_path / "c.sqlite")) as gateway:
        fresh = gateway.run(requests)
    assert all(r.ok for r in fresh), [r.record.error for r in fresh]
    assert len({r.record.call_id for r in fresh}) == 4
    assert [r.parsed["answer"] for r in fresh] == ["man", "man", "woman", "man"]
    with Gateway(cache=ResponseCache(tmp_path / "c.sqlite"), replay_only=True) as replay:
        again = replay.run(requests)
    assert [r.text for r in again] == [r.text for r in fresh] and all(r.record.cached for r in again)
