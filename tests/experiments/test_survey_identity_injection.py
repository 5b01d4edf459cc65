"""Identity injection in a survey run: the instrument section, its lock, the requests it steers, refusals."""
from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml
from cli_checks import refused

from pvsst.analysis.store.reader import read_survey_run
from pvsst.core.errors import InputError
from pvsst.core.input_files import file_sha256
from pvsst.experiments.prereg.freeze import verify
from pvsst.experiments.spec.lock import lock_path, read_lock
from pvsst.experiments.survey.injection import condition_steerings, vectors_field
from pvsst.experiments.survey.personas import human_table, persona_table
from pvsst.experiments.survey.runner import run_survey
from pvsst.experiments.survey.spec import load_survey, with_overrides
from pvsst.experiments.survey.units import SurveyUnit, unit_requests
from pvsst.sim.identity.vectors import IdentityVectors, load_vectors, save_vectors

WVS = "experiments/surveys/wvs2011_values.yaml"
VECTORS = "experiments/surveys/wvs2011_values_smollm2.npz"


@pytest.fixture(scope="module")
def small():
    """The WVS instrument asked of 3 personas, and those personas."""
    spec = with_overrides(load_survey(WVS), n=3)
    return spec, persona_table(spec, human_table(spec))


def _scaled_copy(path, factor: float) -> None:
    """A valid vectors file beside the shipped one's content, every vector times ``factor``."""
    vectors = load_vectors(VECTORS)
    save_vectors(IdentityVectors(vectors.header, (vectors.vectors * factor).astype(np.float32)), path)


def _copy_instrument(tmp_path):
    for name in (WVS, WVS + ".lock.json", VECTORS):
        shutil.copy(name, tmp_path)
    return tmp_path / "wvs2011_values.yaml"


def test_the_wvs_instrument_runs_psii_and_its_baselines_and_its_lock_holds_the_vectors():
    spec = load_survey(WVS)
    assert [c.id for c in spec.conditions] == ["direct", "direct_t2", "demographic", "diversity", "psii"]
    by_id = {c.id: c for c in spec.conditions}
    assert by_id["direct_t2"].temperature == 2.0 and by_id["demographic"].persona_card == "demographic"
    assert by_id["psii"].persona_card == "profile" and by_id["psii"].identity_injection.layers == [10, 11, 12, 13, 14]
    assert verify(WVS).ok
    assert read_lock(WVS).materials == {vectors_field("psii"): file_sha256(VECTORS)}
    assert load_vectors(VECTORS).attributes == {"sex": ["female", "male"],
                                                "education": ["bachelors_degree", "high_school_graduate"]}


def test_editing_the_vectors_after_freezing_fails_verify_and_the_run_exits_2(tmp_path, capsys):
    instrument = _copy_instrument(tmp_path)
    assert verify(instrument).ok
    _scaled_copy(tmp_path / "wvs2011_values_smollm2.npz", 1.01)
    check = verify(instrument)
    assert not check.ok and check.changed_materials == [str(tmp_path / "wvs2011_values_smollm2.npz")]
    out = tmp_path / "run"
    err = refused(capsys, ["survey", "run", str(instrument), "--out", str(out), "--n", "2"])
    assert "wvs2011_values_smollm2.npz" in err and "changed since the spec was frozen" in err
    assert not out.exists()


def test_steered_requests_carry_each_personas_steering_and_their_cache_keys_follow_the_vectors(small, tmp_path):
    spec, personas = small
    steerings = condition_steerings(spec, personas, "experiments/surveys")
    assert set(steerings) == {"psii"}
    ids = tuple(personas["persona_id"])
    unit = SurveyUnit("u", "embedded/smollm2-135m", "psii", ids)
    requests = [r for r, _ in unit_requests(spec, unit, personas, steerings["psii"])]
    assert len(requests) == 3 * 5
    for request in requests:
        row = personas.set_index("persona_id").loc[request.agent_id]
        steering = request.steering
        assert steering.attributes == (("education", str(row["education"])), ("sex", str(row["sex"])))
        assert (steering.coef, steering.noise_sigma, steering.layers) == (2.0, 0.5, (10, 11, 12, 13, 14))
        assert steering.vectors_sha256 == file_sha256(VECTORS)
    assert len({steerings["psii"][p].noise_seed for p in ids}) == 3  # each persona its own noise

    _scaled_copy(tmp_path / "other.npz", 2.0)
    section = spec.conditions[-1].identity_injection.model_copy(update={"vectors": str(tmp_path / "other.npz")})
    other_spec = spec.model_copy(update={"conditions": [*spec.conditions[:-1], spec.conditions[-1].model_copy(
        update={"identity_injection": section})]})
    moved = [r for r, _ in unit_requests(other_spec, unit, personas,
                                         condition_steerings(other_spec, personas, "experiments/surveys")["psii"])]
    assert all(a.cache_key() != b.cache_key() for a, b in zip(requests, moved))
    assert [a.prompt_sha256() for a in requests] == [b.prompt_sha256() for b in moved]
    unsteered = [r for r, _ in unit_requests(spec, unit, personas)]
    assert all(r.steering is None for r in unsteered)
    assert all(a.cache_key() != b.cache_key() for a, b in zip(requests, unsteered))


def test_injection_needs_a_local_model(tmp_path, capsys):
    with pytest.raises(InputError, match="identity injection needs a local llama.cpp model"):
        with_overrides(load_survey(WVS), model="openai/gpt-4o-mini")
    err = refused(capsys, ["survey", "run", WVS, "--out", str(tmp_path / "r"), "--model", "openai/gpt-4o-mini"])
    assert "conditions[4].identity_injection" in err


@pytest.mark.parametrize(("change", "message"), [
    ({"attributes": ["sex", "income"]}, "no vectors for attribute 'income'"),
    ({"attributes": ["sex", "shoe_size"]}, "no column 'shoe_size'"),
    ({"layers": [20]}, "layer 20 has no stored vector"),
    ({"layers": [40]}, "layer 40 is out of range"),
    ({"vectors": "missing.npz"}, "cannot read the vectors file"),
])
def test_a_bad_injection_section_is_refused_before_any_call(small, change, message):
    spec, personas = small
    section = spec.conditions[-1].identity_injection.model_copy(update=change)
    condition = spec.conditions[-1].model_copy(update={"identity_injection": section})
    bad = spec.model_copy(update={"conditions": [condition]})
    with pytest.raises(InputError, match=message):
        condition_steerings(bad, personas, "experiments/surveys")


def test_freezing_an_instrument_whose_vectors_lack_an_attribute_exits_2(tmp_path, capsys):
    instrument = _copy_instrument(tmp_path)
    data = yaml.safe_load(instrument.read_text())
    data["conditions"][4]["identity_injection"]["attributes"] = ["sex", "ideology"]
    instrument.write_text(yaml.safe_dump(data, sort_keys=False))
    lock_path(instrument).unlink()
    err = refused(capsys, ["prereg", "freeze", str(instrument)])
    assert "no vectors for attribute 'ideology'" in err and not lock_path(instrument).exists()


def _write_unchecked(path, header: dict, values: np.ndarray) -> None:
    """A vectors file written by hand, past the checks :func:`save_vectors` makes."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, array in (("header", np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)),
                            ("vectors", values)):
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, array)
            archive.writestr(f"{name}.npy", buffer.getvalue())


def _nan_in_male(vectors: IdentityVectors) -> tuple[dict, np.ndarray]:
    values = vectors.vectors.copy()
    values[vectors.entries.index(("sex", "male")), 2, 7] = np.inf
    return vectors.header, values


@pytest.mark.parametrize(("damage", "message"), [
    (lambda v: ({**v.header, "model_sha256": "cd" * 32}, v.vectors), "measured on another model file"),
    (_nan_in_male, "non-finite values in the vector of sex=male"),
])
def test_vectors_of_another_model_or_non_finite_are_refused_at_freeze_and_run(tmp_path, capsys, damage, message):
    instrument = _copy_instrument(tmp_path)
    lock_path(instrument).unlink()
    _write_unchecked(tmp_path / "wvs2011_values_smollm2.npz", *damage(load_vectors(VECTORS)))
    err = refused(capsys, ["prereg", "freeze", str(instrument)])
    assert message in err and "wvs2011_values_smollm2.npz" in err and not lock_path(instrument).exists()
    out = tmp_path / "run"
    err = refused(capsys, ["survey", "run", str(instrument), "--out", str(out), "--n", "2", "--deviation", "test"])
    assert message in err and not out.exists()


@pytest.mark.slow
@pytest.mark.embedded
def test_injection_reaches_the_embedded_models_calls_and_coef_zero_is_the_profile_exactly(tmp_path):
    data = yaml.safe_load(open(WVS).read())
    section = {**data["conditions"][4]["identity_injection"], "vectors": str(Path(VECTORS).resolve())}
    data.update(questions=[q for q in data["questions"] if q["id"] == "trust"], controls=[],
                personas={**data["personas"], "n": 2}, conditions=[
                    {"id": "profile", "persona_card": "profile", "elicitation": "logprobs"},
                    {"id": "psii0", "persona_card": "profile", "elicitation": "logprobs",
                     "identity_injection": {**section, "coef": 0.0, "noise_sigma": 0.0}},
                    {"id": "psii6", "persona_card": "profile", "elicitation": "logprobs",
                     "identity_injection": {**section, "coef": 6.0, "noise_sigma": 0.0}}])
    instrument = tmp_path / "tiny.yaml"
    instrument.write_text(yaml.safe_dump(data, sort_keys=False))
    assert run_survey(instrument, tmp_path / "run", deviation="test", progress=False).status == 0
    tables = read_survey_run(tmp_path / "run", ("responses", "llm_calls"))
    by = {c: part.set_index("persona_id")["probabilities"] for c, part in tables.responses.groupby("condition")}
    assert by["psii0"].to_dict() == by["profile"].to_dict()  # coef 0, sigma 0: bit for bit
    assert all(by["psii6"][p] != by["profile"][p] for p in by["profile"].index)
    assert len(tables.llm_calls) == 6 and not tables.llm_calls["cached"].any()
