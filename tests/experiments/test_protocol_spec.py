"""The spec's ``protocol`` section: presets, overrides, the hash, and where the procedure is recorded."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import small_study_spec
from runner_helpers import frozen_copy

from pvsst.experiments.spec.design import expand
from pvsst.experiments.spec.study import canonical_spec, load_spec, spec_from_canonical, spec_sha256
from pvsst.experiments.study.runner import run_study
from pvsst.experiments.study.trial_pipeline import trial_config
from pvsst.sim.protocol import protocol_from_preset, setting_names


def test_default_is_pvsst_with_every_setting_resolved_in_the_canonical_form():
    spec = load_spec("experiments/specs/scripted_smoke.yaml")
    assert spec.protocol.to_protocol() == protocol_from_preset("pvsst")
    canonical = canonical_spec(spec)["protocol"]
    assert set(canonical) == {"preset", *setting_names()}
    assert canonical["preset"] == "pvsst" and canonical["vote_sampling"] == "streams"


def test_preset_fills_settings_and_overrides_win():
    spec = small_study_spec(trial={"n_agents": 12}, protocol={"preset": "pvsst_reference", "retry_seed": "next"})
    protocol = spec.protocol.to_protocol()
    assert protocol == protocol_from_preset("pvsst_reference", retry_seed="next")
    assert (protocol.vote_sampling, protocol.retry_seed, protocol.render) == ("reference", "next", "verbatim")


def test_the_hash_covers_the_resolved_procedure():
    base = small_study_spec(trial={"n_agents": 12})
    reference = small_study_spec(trial={"n_agents": 12}, protocol={"preset": "pvsst_reference"})
    spelled_out = small_study_spec(trial={"n_agents": 12}, protocol={
        "preset": "pvsst_reference", "vote_sampling": "reference", "json_mode": "json_object"})
    overridden = small_study_spec(trial={"n_agents": 12}, protocol={
        "preset": "pvsst_reference", "json_mode": "schema"})
    assert spec_sha256(base) != spec_sha256(reference)
    assert spec_sha256(reference) == spec_sha256(spelled_out)  # a preset's own value changes nothing
    assert spec_sha256(overridden) not in {spec_sha256(reference), spec_sha256(base)}
    assert spec_from_canonical(canonical_spec(overridden)) == overridden


def test_protocol_reaches_every_trial_config():
    spec = small_study_spec(trial={"n_agents": 12}, protocol={"preset": "pvsst_reference"})
    plans = expand(spec).trials
    assert {trial_config(spec, plan).protocol for plan in plans} == {protocol_from_preset("pvsst_reference")}


def test_confirmatory_spec_runs_the_reference_mechanics_with_pvsst_materials():
    spec = load_spec("experiments/specs/pvsst_confirmatory.yaml")
    protocol = spec.protocol.to_protocol()
    assert protocol == protocol_from_preset("pvsst_reference", materials=protocol.materials)
    assert all(model.startswith("ollama_chat/") for model in spec.factors.models)


@pytest.mark.parametrize("preset", ["pvsst", "pvsst_reference"])
def test_manifest_and_metrics_record_the_protocol(tmp_path: Path, preset: str):
    spec_path = frozen_copy(tmp_path, "quickstart.yaml", freeze_it=False)
    text = spec_path.read_text().replace("embedded/smollm2-135m", "scripted/imitate")
    spec_path.write_text(text + f"\nprotocol: {{preset: {preset}, vote_sampling: streams}}\n")
    from pvsst.experiments.prereg.freeze import freeze
    freeze(spec_path)
    summary = run_study(spec_path, tmp_path / "run", progress=False)
    assert summary.failed == 0
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["protocol"] == {**protocol_from_preset(preset, vote_sampling="streams").__dict__}
    for metrics_path in (tmp_path / "run" / "trials").glob("*/metrics.json"):
        metrics = json.loads(metrics_path.read_text())
        assert metrics["protocol"] == preset
        assert metrics["protocol_overrides"] == ("vote_sampling=streams" if preset == "pvsst_reference" else "")
        assert metrics["similarity_edge_cases"] == ("reference" if preset == "pvsst_reference" else "pvsst")
