"""The identity-vectors artifact, a call's steering and its cache key, without loading a model."""
from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest

from pvsst.core.errors import InputError
from pvsst.core.input_files import file_sha256
from pvsst.sim.identity.injection import persona_steerings
from pvsst.sim.identity.vectors import IdentityVectors, cached_vectors, example_header, load_vectors, save_vectors
from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.llm.providers.registry import ensure_steerable
from pvsst.sim.llm.steering import Steering
from pvsst.sim.llm.types import LLMRequest

N_LAYER, N_EMBD = 30, 4
ENTRIES = [["sex", "female"], ["sex", "male"], ["party", "Democrat"], ["party", "Republican"]]
MODEL_SHA = "ab" * 32


def _vectors(values=None, **header_changes) -> IdentityVectors:
    header = example_header(entries=ENTRIES, layers=[8, 9, 10], n_layer=N_LAYER, n_embd=N_EMBD)
    header.update(model_sha256=MODEL_SHA, **header_changes)
    if values is None:
        values = np.arange(len(ENTRIES) * 3 * N_EMBD, dtype=np.float32).reshape(len(ENTRIES), 3, N_EMBD) / 10
    return IdentityVectors(header, values)


def _steering(path, sha, **changes) -> Steering:
    fields = dict(vectors=str(path), vectors_sha256=sha, attributes=(("sex", "female"), ("party", "Democrat")),
                  layers=(9, 10), coef=2.0)
    fields.update(changes)
    return Steering(**fields)


def _one_line(err: pytest.ExceptionInfo) -> str:
    text = str(err.value)
    assert "\n" not in text
    return text


def test_artifact_round_trips_byte_for_byte(tmp_path):
    vectors = _vectors()
    sha = save_vectors(vectors, tmp_path / "a.npz")
    assert save_vectors(vectors, tmp_path / "b.npz") == sha == file_sha256(tmp_path / "a.npz")
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    back = load_vectors(tmp_path / "a.npz", sha256=sha, model_sha256=MODEL_SHA)
    assert back.header == json.loads(json.dumps(vectors.header))
    assert np.array_equal(back.vectors, vectors.vectors) and back.vectors.dtype == np.float32
    assert back.attributes == {"sex": ["female", "male"], "party": ["Democrat", "Republican"]}


def test_control_vector_is_coef_times_the_sum_plus_seeded_noise(tmp_path):
    vectors = _vectors()
    steering = _steering("v.npz", "0" * 64)
    expected = 2.0 * (vectors.vector("sex", "female")[[1, 2]].astype(np.float64)
                      + vectors.vector("party", "Democrat")[[1, 2]])
    assert np.array_equal(vectors.control_vector(steering), expected.astype(np.float32))
    noisy = _steering("v.npz", "0" * 64, noise_sigma=0.5, noise_seed=3)
    noise = vectors.control_vector(noisy).astype(np.float64) - expected
    assert np.allclose(noise, np.random.default_rng(3).normal(0, 0.5, (2, N_EMBD)), atol=1e-5)
    assert np.array_equal(vectors.control_vector(noisy), vectors.control_vector(noisy))
    assert not np.array_equal(vectors.control_vector(noisy),
                              vectors.control_vector(_steering("v.npz", "0" * 64, noise_sigma=0.5, noise_seed=4)))
    zero = _steering("v.npz", "0" * 64, coef=0.0)
    assert not vectors.control_vector(zero).any()


@pytest.mark.parametrize("change, needle", [
    ({"model_sha256": "cd" * 32}, "measured on another model file"),
    ({"layers": [8, 9, 30]}, "layer 30 is out of range 0..29"),
    ({"format_version": 99}, "expected pvsst-identity-vectors version 1"),
    ({"entries": [["sex"], ["sex", "male"], ["party", "Democrat"], ["party", "Republican"]]}, "entries: must be"),
    ({"attributes": ["sex"]}, "attributes: must map each attribute"),
    ({"token_span": "middle"}, "token_span: must be one of user, prompt, last"),
])
def test_a_bad_artifact_is_one_line(tmp_path, change, needle):
    header = example_header(entries=ENTRIES, layers=[8, 9, 10], n_layer=N_LAYER, n_embd=N_EMBD)
    header.update(model_sha256=MODEL_SHA)
    bad = dict(header, **change)
    path = tmp_path / "v.npz"
    with zipfile.ZipFile(path, "w") as archive:  # written by hand: the constructor would refuse it
        for name, array in (("header", np.frombuffer(json.dumps(bad).encode(), dtype=np.uint8)),
                            ("vectors", np.zeros((len(ENTRIES), 3, N_EMBD), dtype=np.float32))):
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, array)
            archive.writestr(f"{name}.npy", buffer.getvalue())
    with pytest.raises(InputError) as err:
        load_vectors(path, model_sha256=MODEL_SHA)
    assert needle in _one_line(err) and str(path) in str(err.value)


def test_non_finite_values_and_wrong_shapes_are_refused():
    values = np.zeros((len(ENTRIES), 3, N_EMBD), dtype=np.float32)
    values[2, 1, 0] = np.nan
    with pytest.raises(InputError) as err:
        _vectors(values)
    assert "non-finite values in the vector of party=Democrat" in _one_line(err)
    with pytest.raises(InputError) as err:
        _vectors(np.zeros((len(ENTRIES), 2, N_EMBD), dtype=np.float32))
    assert "expected float32 of shape (4, 3, 4)" in _one_line(err)


def test_not_an_artifact_and_a_changed_file_are_refused(tmp_path):
    (tmp_path / "junk.npz").write_text("not a zip")
    with pytest.raises(InputError) as err:
        load_vectors(tmp_path / "junk.npz")
    assert "not an identity-vectors file" in _one_line(err)
    with pytest.raises(InputError) as err:
        load_vectors(tmp_path / "missing.npz")
    assert "cannot read the vectors file" in _one_line(err)
    sha = save_vectors(_vectors(), tmp_path / "v.npz")
    save_vectors(_vectors(np.ones((len(ENTRIES), 3, N_EMBD), dtype=np.float32)), tmp_path / "v.npz")
    with pytest.raises(InputError) as err:
        load_vectors(tmp_path / "v.npz", sha256=sha)
    assert "the vectors changed since they were named" in _one_line(err)


@pytest.mark.parametrize("layers, needle", [
    ((0, 9), "layer 0 is out of range: a control vector acts on layers 1..29"),
    ((9, 30), "layer 30 is out of range"),
    ((9, 11), "layer 11 has no stored vector (stored: 8-10)"),
])
def test_injection_layers_are_checked(layers, needle):
    with pytest.raises(InputError) as err:
        _vectors().control_vector(_steering("v.npz", "0" * 64, layers=layers))
    assert needle in _one_line(err)


def test_an_attribute_or_value_without_a_vector_is_refused(tmp_path):
    path = tmp_path / "v.npz"
    save_vectors(_vectors(), path)
    table = pd.DataFrame({"persona_id": ["p1", "p2"], "sex": ["female", "male"], "party": ["Democrat", None]})
    steerings = persona_steerings(table, path, attributes=["sex", "party"], layers=(9, 10), coef=1.5,
                                  noise_sigma=0.1, seed=5, model_sha256=MODEL_SHA)
    assert steerings["p1"].attributes == (("party", "Democrat"), ("sex", "female"))
    assert steerings["p2"].attributes == (("sex", "male"),)  # no party: no party vector
    assert steerings["p1"].noise_seed != steerings["p2"].noise_seed
    assert steerings["p1"].vectors_sha256 == file_sha256(path)
    problems = [
        (dict(attributes=["sex", "region"]), "the persona table has no column 'region'"),
        (dict(attributes=["sex"], table=table.assign(sex=["female", "nonbinary"])),
         "no vector for value 'nonbinary' (values: female, male)"),
        (dict(attributes=["persona_id"]), "no vectors for attribute 'persona_id' (it has: sex, party)"),
        (dict(attributes=["sex"], model_sha256="cd" * 32), "measured on another model file"),
    ]
    for change, needle in problems:
        arguments = dict(attributes=["sex"], layers=(9, 10), coef=1.0, model_sha256=MODEL_SHA)
        frame = change.pop("table", table)
        arguments.update(change)
        with pytest.raises(InputError) as err:
            persona_steerings(frame, path, **arguments)
        assert needle in _one_line(err), needle


def test_steering_values_are_checked():
    for change, needle in [({"coef": float("nan")}, "coef: must be a finite number"),
                           ({"noise_sigma": -1.0}, "noise_sigma: must be >= 0"),
                           ({"vectors_sha256": "xyz"}, "vectors_sha256: must be 64 lower-case hex digits"),
                           ({"layers": ()}, "layers: must be one or more layer numbers")]:
        with pytest.raises(InputError) as err:
            _steering("v.npz", "0" * 64, **change)
        assert needle in _one_line(err)


# The keys of these requests as pvsst computed them at commit e5dc9cb, before requests could be steered.
GOLDEN_KEYS = {
    "scored": "618246c3d05318ba040934543f24a782575f651d5da62031da35100fdd9127c7",
    "echo": "eea486638e4c8ef57494d51609992003915e019c48e084dcb2fc07c5e8b7c4ad",
}


def test_unsteered_cache_keys_are_unchanged_and_steering_enters_the_key():
    scored = LLMRequest(model_name="embedded/smollm2-135m",
                        messages=({"role": "system", "content": "Answer."}, {"role": "user", "content": "Yes or no?"}),
                        schema={"type": "object"}, temperature=0.0, max_tokens=24, seed=11, option_scoring=("1", "2"))
    echo = LLMRequest(model_name="scripted/echo", messages=({"role": "user", "content": "hi"},), seed=7)
    assert {"scored": scored.cache_key(), "echo": echo.cache_key()} == GOLDEN_KEYS
    base = _steering("a/v.npz", "0" * 64)
    keys = {dataclasses.replace(scored, steering=steering).cache_key() for steering in (
        base, _steering("a/v.npz", "0" * 64, coef=2.5), _steering("a/v.npz", "1" * 64),
        _steering("a/v.npz", "0" * 64, scope="prompt"), _steering("a/v.npz", "0" * 64, noise_sigma=0.1),
        _steering("a/v.npz", "0" * 64, layers=(9,)), _steering("a/v.npz", "0" * 64, attributes=(("sex", "male"),)))}
    assert len(keys) == 7 and GOLDEN_KEYS["scored"] not in keys
    moved = dataclasses.replace(scored, steering=_steering("elsewhere/v.npz", "0" * 64))
    assert moved.cache_key() == dataclasses.replace(scored, steering=base).cache_key()


def test_only_an_embedded_model_can_be_steered(tmp_path):
    steering = _steering(tmp_path / "v.npz", "0" * 64)
    for model in ("openai/gpt-4o", "scripted/echo"):
        request = LLMRequest(model_name=model, messages=({"role": "user", "content": "hi"},), steering=steering)
        with Gateway() as gateway, pytest.raises(InputError) as err:
            asyncio.run(gateway.complete_many([request]))
        assert "identity injection needs a local llama.cpp model" in _one_line(err)
        assert gateway.provider_tries == 0
    with pytest.raises(InputError):
        ensure_steerable("ollama/llama3", steering)


def test_loaded_artifacts_are_cached_by_their_hash(tmp_path):
    path = tmp_path / "v.npz"
    sha = save_vectors(_vectors(), path)
    first = cached_vectors(str(path), sha, MODEL_SHA)
    save_vectors(_vectors(np.ones((len(ENTRIES), 3, N_EMBD), dtype=np.float32)), path)
    assert cached_vectors(str(path), sha, MODEL_SHA) is first  # the content with that hash, not the new file
    with pytest.raises(InputError):
        cached_vectors(str(path), "9" * 64, MODEL_SHA)
