"""Identity injection in a study: the spec section, its lock, each agent's steering, the per-call vectors
on the embedded model, zero is zero, and the refusals (exit 2, one line, nothing written)."""
from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
import yaml
from cli_checks import refused
from engine_helpers import NEEDS_EMBEDDED_MODEL

from pvsst.core.input_files import file_sha256
from pvsst.experiments.cli import main
from pvsst.experiments.prereg.freeze import verify
from pvsst.experiments.spec.design import expand
from pvsst.experiments.spec.lock import lock_path, read_lock
from pvsst.experiments.spec.study import load_spec
from pvsst.experiments.study.files import collect_study_files
from pvsst.experiments.study.injection import profiled, trial_steerings
from pvsst.experiments.study.runner import run_study
from pvsst.experiments.study.trial_pipeline import trial_config
from pvsst.sim.identity.injection import noise_seed_for
from pvsst.sim.identity.vectors import IdentityVectors, load_vectors, save_vectors
from pvsst.sim.llm.providers import embedded
from pvsst.sim.prompts.render import FIRST_ROUND_NOTE
from pvsst.sim.trial.run import prepare_trial

SHIPPED = "experiments/surveys/wvs2011_values_smollm2.npz"  # sex (female, male), education (2 levels), layers 10-14
PERSONAS = pd.DataFrame({
    "persona_id": ["p1", "p2", "p3"],
    "label": ["nurse", "welder", "teacher"],
    "posting_style": ["warm", "blunt", "careful"],
    "sex": ["female", "male", "female"],
    "education": ["bachelors_degree", "high_school_graduate", "high_school_graduate"],
})
ADVERSARY_ARM = {"models": ["embedded/smollm2-135m"], "topics": ["ai_labels"], "seeds": [101],
                 "conditions": ["likes", "single_source"]}
INJECTION = {"vectors": "vectors.npz", "attributes": ["sex", "education"], "layers": [10, 11], "coef": 2.0,
             "noise_sigma": 0.5}


def _spec_data(**changes) -> dict:
    data = {
        "id": "steered", "title": "A steered study",
        "hypotheses": [{"id": "H1", "statement": "Ranking moves similarity.", "contrast": "ranked",
                        "metric": "final_honest_pairwise_similarity", "direction": "positive"}],
        "outcomes": {"primary": ["final_honest_pairwise_similarity"]},
        "factors": {"models": ["embedded/smollm2-135m"], "topics": ["ai_labels"], "seeds": [101],
                    "conditions": ["likes", "control"]},
        "trial": {"n_agents": 3, "n_rounds": 1, "votes_per_voter": 1, "max_tokens": 24, "vote_max_tokens": 12},
        "personas": {"source": "file", "path": "personas.csv"},
        "analysis": {"contrasts": {"ranked": {"treatment": "likes", "control": "control"}}},
        "execution": {"workers": 1},
        "identity_injection": dict(INJECTION),
    }
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def _scaled(source, target, factor: float) -> None:
    vectors = load_vectors(source)
    save_vectors(IdentityVectors(vectors.header, (vectors.vectors * factor).astype(np.float32)), target)


def _study(folder, name="steered.yaml", people: pd.DataFrame = PERSONAS, **changes):
    """A study folder: the spec, its persona table and a copy of the shipped vectors."""
    folder.mkdir(parents=True, exist_ok=True)
    people.to_csv(folder / "personas.csv", index=False)
    if not (folder / "vectors.npz").exists():
        shutil.copy(SHIPPED, folder / "vectors.npz")
    path = folder / name
    path.write_text(yaml.safe_dump(_spec_data(**changes), sort_keys=False))
    return path


def test_each_honest_agent_gets_its_personas_steering_and_adversaries_none(tmp_path):
    spec_path = _study(tmp_path, factors=ADVERSARY_ARM,
                       analysis={"contrasts": {"ranked": {"treatment": "single_source", "control": "likes"}}})
    spec = load_spec(spec_path)
    assert spec.identity_injection.layers == [10, 11] and spec.identity_injection.profile is True
    plan = next(p for p in expand(spec).trials if p.condition == "single_source")
    steerings = trial_steerings(spec, PERSONAS, tmp_path / "vectors.npz", seed=plan.seed)
    config = trial_config(spec, plan)
    model = prepare_trial(config, PERSONAS, steerings)
    assert len(model.adversaries) == 1
    requests = {a.agent_id: a.post_request(0, [], FIRST_ROUND_NOTE) for a in model.accounts}
    honest = {a.agent_id: str(a.persona["persona_id"]) for a in model.honest}
    assert sorted(honest.values()) == ["p1", "p2", "p3"]
    for agent_id, persona_id in honest.items():
        steering = requests[agent_id].steering
        row = PERSONAS.set_index("persona_id").loc[persona_id]
        assert steering.attributes == (("education", row["education"]), ("sex", row["sex"]))
        assert steering.noise_seed == noise_seed_for(101, persona_id)
        assert steering.vectors_sha256 == file_sha256(SHIPPED)
        assert (steering.coef, steering.noise_sigma, steering.layers, steering.scope) == (2.0, 0.5, (10, 11), "all")
    assert all(requests[a.agent_id].steering is None for a in model.adversaries)
    vote = model.honest[0].vote_request(0, [("a01", "a post")])
    assert vote.steering == requests[model.honest[0].agent_id].steering
    # another trial seed draws other noise; a steered request's cache key holds the vectors' digest
    other = trial_steerings(spec, PERSONAS, tmp_path / "vectors.npz", seed=211)
    assert other["p1"].noise_seed != steerings["p1"].noise_seed
    unsteered = prepare_trial(config, PERSONAS).honest[0].post_request(0, [], FIRST_ROUND_NOTE)
    assert unsteered.steering is None and unsteered.messages == requests[model.honest[0].agent_id].messages
    assert unsteered.cache_key() != requests[model.honest[0].agent_id].cache_key()


def test_profile_false_empties_the_persona_line_and_keeps_the_vectors(tmp_path):
    spec = load_spec(_study(tmp_path, identity_injection={**INJECTION, "profile": False}))
    plan = expand(spec).trials[0]
    table = profiled(spec, PERSONAS)
    model = prepare_trial(trial_config(spec, plan), table,
                          trial_steerings(spec, PERSONAS, tmp_path / "vectors.npz", seed=101))
    request = model.honest[0].post_request(0, [], FIRST_ROUND_NOTE)
    assert "\nYOU: \n" in request.messages[1]["content"] and request.steering is not None
    assert profiled(load_spec(_study(tmp_path, "kept.yaml")), PERSONAS) is PERSONAS  # profile: true


def test_the_vectors_enter_the_lock_and_travel_to_workers_as_bytes(tmp_path, capsys):
    spec_path = _study(tmp_path)
    assert main(["prereg", "freeze", str(spec_path)]) == 0
    assert read_lock(spec_path).materials["identity_injection.vectors"] == file_sha256(SHIPPED)
    assert verify(spec_path).ok
    files, origins = collect_study_files(load_spec(spec_path), tmp_path)
    assert files.vectors == (tmp_path / "vectors.npz").read_bytes()
    assert origins["vectors"] == str(tmp_path / "vectors.npz")
    staged = files.stage(tmp_path / "scratch")
    assert staged.vectors.read_bytes() == files.vectors

    _scaled(SHIPPED, tmp_path / "vectors.npz", 1.01)
    check = verify(spec_path)
    assert not check.ok and check.changed_materials == [str(tmp_path / "vectors.npz")]
    out = tmp_path / "run"
    err = refused(capsys, ["run", str(spec_path), "--out", str(out)])
    assert "vectors.npz" in err and not out.exists()
    assert main(["prereg", "freeze", str(spec_path), "--force"]) == 0
    assert read_lock(spec_path).materials["identity_injection.vectors"] == file_sha256(tmp_path / "vectors.npz")
    # a spec without the section hashes as before the section existed
    plain = _study(tmp_path, "plain.yaml", identity_injection=None)
    assert main(["prereg", "freeze", str(plain)]) == 0
    assert "identity_injection" not in read_lock(plain).spec
    assert "identity_injection.vectors" not in read_lock(plain).materials


def _other_model_vectors(target) -> None:
    vectors = load_vectors(SHIPPED)
    save_vectors(IdentityVectors({**vectors.header, "model_sha256": "0" * 64}, vectors.vectors), target)


@pytest.mark.parametrize(("changes", "message"), [
    ({"factors": {"models": ["openai/gpt-4o-mini"], "topics": ["ai_labels"], "seeds": [101],
                  "conditions": ["likes", "control"]}}, "identity injection needs a local llama.cpp model"),
    ({"identity_injection": {**INJECTION, "layers": [40]}}, "layer 40 is out of range"),
    ({"identity_injection": {**INJECTION, "layers": [0]}}, "layers start at 1"),
    ({"identity_injection": {**INJECTION, "attributes": ["sex", "shoe_size"]}}, "no column 'shoe_size'"),
    ({"identity_injection": {**INJECTION, "attributes": ["sex", "label"]}}, "no vectors for attribute 'label'"),
    ({"identity_injection": {**INJECTION, "vectors": "other_model.npz"}}, "measured on another model file"),
    ({"identity_injection": {**INJECTION, "vectors": "missing.npz"}}, "missing.npz"),
    ({"identity_injection": {**INJECTION, "coef": float("nan")}}, "identity_injection.coef"),
    ({"personas": None}, "needs personas.source census or file"),
    ({"personas": {"source": "census", "n": 20, "seed": 1}}, "no vector for value"),  # census education levels
    ({"audit": {"vary": {"sex": ["female", "male"]}, "matched_sets": 2}}, "counterfactual audit of steered agents"),
])
def test_a_bad_injection_is_refused_at_freeze_with_one_line_and_no_lock(tmp_path, capsys, changes, message):
    _other_model_vectors(tmp_path / "other_model.npz")
    spec_path = _study(tmp_path, **changes)
    err = refused(capsys, ["prereg", "freeze", str(spec_path)])
    assert message in err, err
    assert not lock_path(spec_path).exists()


def test_a_persona_value_without_a_vector_is_refused(tmp_path, capsys):
    people = PERSONAS.assign(education=["bachelors_degree", "some_college", "high_school_graduate"])
    spec_path = _study(tmp_path, people=people)
    err = refused(capsys, ["prereg", "freeze", str(spec_path)])
    assert "no vector for value 'some_college'" in err and not lock_path(spec_path).exists()


# --- on the embedded model ---------------------------------------------------------------------------


def _run(spec_path, out, condition: str = "likes") -> dict[str, pd.DataFrame]:
    """Freeze the spec and run its one trial of ``condition`` (2 agents, 1 round: 2 posts and 2 votes)."""
    assert main(["prereg", "freeze", str(spec_path)]) == 0
    plan = next(p for p in expand(load_spec(spec_path)).trials if p.condition == condition)
    summary = run_study(spec_path, out, progress=False, trial_ids=[plan.trial_id])
    assert summary.done == 1, summary.line()
    return {name: pd.read_parquet(out / "trials" / plan.trial_id / f"{name}.parquet")
            for name in ("posts", "votes", "llm_calls")}


SMALL = {"n_agents": 2, "n_rounds": 1, "votes_per_voter": 1, "max_tokens": 40, "vote_max_tokens": 16,
         "max_attempts": 1}
LENIENT = {"contrasts": {"ranked": {"treatment": "likes", "control": "control"}}, "parse_failure_threshold": 1.0}


@NEEDS_EMBEDDED_MODEL
@pytest.mark.embedded
@pytest.mark.slow
def test_coef_zero_gives_the_unsteered_study_bit_for_bit(tmp_path):
    plain = _run(_study(tmp_path / "plain", identity_injection=None, trial=SMALL, analysis=LENIENT),
                 tmp_path / "plain-run")
    off = _run(_study(tmp_path / "coef0", identity_injection={**INJECTION, "coef": 0.0, "noise_sigma": 0.0},
                      trial=SMALL, analysis=LENIENT), tmp_path / "coef0-run")
    columns = ["agent_id", "round", "text", "stance", "confidence", "parse_ok"]
    assert off["posts"][columns].equals(plain["posts"][columns])
    assert off["votes"].drop(columns=["call_id"], errors="ignore").equals(
        plain["votes"].drop(columns=["call_id"], errors="ignore"))
    for column in ("prompt_sha256", "status", "completion_tokens"):
        assert off["llm_calls"][column].tolist() == plain["llm_calls"][column].tolist()
    assert not off["llm_calls"]["cached"].any()  # computed steered, not replayed from the unsteered run
    assert len(plain["posts"]) == 2 and len(plain["llm_calls"]) == 4  # 2 posts and 2 votes
    # zero vectors give the same all-zero control vector as coef 0, so the same replies
    _scaled(SHIPPED, tmp_path / "zero.npz", 0.0)
    spec = load_spec(_study(tmp_path / "zero", identity_injection={**INJECTION, "noise_sigma": 0.0}))
    for steering in trial_steerings(spec, PERSONAS, tmp_path / "zero.npz", seed=101).values():
        assert not embedded.control_rows("smollm2-135m", steering).any()


@NEEDS_EMBEDDED_MODEL
@pytest.mark.embedded
@pytest.mark.slow
def test_each_call_adds_its_own_personas_control_vector(tmp_path, monkeypatch):
    recorded = []
    real_generate = embedded.generate

    def recording_generate(name, messages, **kwargs):
        steering = kwargs.get("steering")
        recorded.append((messages[-1]["content"], embedded.control_rows(name, steering) if steering else None))
        return real_generate(name, messages, **kwargs)

    monkeypatch.setattr(embedded, "generate", recording_generate)
    people = PERSONAS.iloc[[0, 1]]
    analysis = {**LENIENT, "contrasts": {"ranked": {"treatment": "single_source", "control": "likes"}}}
    spec_path = _study(tmp_path, people=people, trial=SMALL, factors=ADVERSARY_ARM, analysis=analysis)
    _run(spec_path, tmp_path / "run", condition="single_source")
    vectors = load_vectors(SHIPPED)
    rows = vectors.check_layers((10, 11))
    table = pd.read_parquet(tmp_path / "run" / "personas.parquet").set_index("persona_id")
    assert table["card"].nunique() == 2
    seen: dict[str, list] = {}
    for prompt, vector in recorded:
        persona = [pid for pid, card in table["card"].items() if f"YOU: {card}\n" in prompt]
        if not persona:  # an adversary's call: blend-in persona, never steered
            assert vector is None
            continue
        (pid,) = persona
        expected = np.zeros((2, vectors.header["n_embd"]))  # as documented: float64 sum, then float32
        expected += vectors.vector("education", table.loc[pid, "education"])[rows]
        expected += vectors.vector("sex", table.loc[pid, "sex"])[rows]
        expected *= 2.0
        expected += np.random.default_rng(noise_seed_for(101, pid)).normal(0.0, 0.5, expected.shape)
        np.testing.assert_array_equal(vector, expected.astype(np.float32))
        seen.setdefault(pid, []).append(vector)
    assert len(recorded) == 5  # 2 honest posts and 2 votes, steered; 1 adversary post
    assert {pid: len(v) for pid, v in seen.items()} == {"p1": 2, "p2": 2}  # a post and a vote each
    assert not np.array_equal(seen["p1"][0], seen["p2"][0])
