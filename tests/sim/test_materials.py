"""Study materials as a directory, validated strictly, frozen by hash.

A materials file edited after `pvsst prereg freeze` makes `pvsst run` exit 2 naming the file; a missing
file or placeholder is an error naming the file; `pvsst protocol new DIR` copies pvsst's materials.
"""
from __future__ import annotations

import json

import pandas as pd
import pytest

from pvsst.core.errors import InputError
from pvsst.experiments.cli import main
from pvsst.sim.materials import MATERIAL_FILES, TEMPLATES, copy_materials, default_materials_dir, load_materials

TINY_SPEC = """\
spec_version: 1
id: tiny_materials
title: Tiny study for the materials lock
hypotheses:
  - {id: H1, statement: x, contrast: likes_minus_control, metric: final_honest_pairwise_similarity,
     direction: two_sided, primary: true}
outcomes: {primary: [final_honest_pairwise_similarity]}
factors: {models: [scripted/imitate], topics: [ai_labels], seeds: [101], conditions: [control, likes]}
trial: {n_agents: 4, n_rounds: 2, votes_per_voter: 2, feed_size: 2}
analysis:
  contrasts: {likes_minus_control: {treatment: likes, control: control}}
"""


@pytest.fixture
def materials(tmp_path):
    copy_materials(tmp_path / "mat")
    return tmp_path / "mat"


def _spec_naming(tmp_path):
    """A spec whose protocol names the materials directory ``mat`` (relative to the spec file)."""
    spec = tmp_path / "tiny.yaml"
    spec.write_text(TINY_SPEC + "protocol: {materials: mat}\n")
    return spec


def test_shipped_materials_are_complete_and_valid():
    m = load_materials()
    assert (sorted(p.name for p in default_materials_dir().iterdir() if p.name in MATERIAL_FILES)
            == sorted(MATERIAL_FILES))
    assert set(m.templates) == set(TEMPLATES)
    assert m.account_ids("honest", 12) == [f"a{i:02d}" for i in range(12)]
    assert m.account_ids("honest", 101)[-1] == "a100" and m.account_ids("honest", 101)[0] == "a000"
    assert m.account_ids("distributed_sources", 4) == ["x00", "x01", "x02", "x03"]


@pytest.mark.parametrize("name", ["post.txt", "honest_personas.csv", "accounts.yaml"])
def test_missing_file_names_the_file(materials, name):
    (materials / name).unlink()
    with pytest.raises(InputError) as err:
        load_materials(materials)
    assert err.value.source == str(materials / name)


@pytest.mark.parametrize("kind, old, new, field, problem", [
    ("vote", "$posts", "", "$posts", "required placeholder missing"),
    ("post", "$feed", "$fed", "$fed", "unknown placeholder"),
    ("memory_line", '"$post"', '"$post" $', "template", "invalid placeholder syntax"),
])
def test_bad_placeholder_names_the_file(materials, kind, old, new, field, problem):
    path = materials / f"{kind}.txt"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    with pytest.raises(InputError) as err:
        load_materials(materials)
    assert (err.value.source, err.value.field) == (str(path), field)
    assert problem in err.value.problem


@pytest.mark.parametrize("text, field", [
    ('honest: "a{i:02d}"\nsingle_source: "x"\ndistributed_sources: "x{i:02d}"\n', "single_source"),
    ('honest: "a{i:02d}"\nsingle_source: "a{i:02d}"\ndistributed_sources: "x{i:02d}"\n', "single_source"),
    ('honest: "a{j}"\nsingle_source: "c2{i:03d}"\ndistributed_sources: "c3{i:03d}"\n', "honest"),
    ('honest: "a{i:02d}"\nsingle_source: "c2{i:03d}"\ndistributed_sources: "c3{i:03d}"\nmods: "m{i}"\n', "mods"),
])
def test_bad_account_scheme(materials, text, field):
    (materials / "accounts.yaml").write_text(text)
    with pytest.raises(InputError) as err:
        load_materials(materials)
    assert err.value.field == field


def test_reference_style_ids_and_wording_reach_the_prompts(materials, tmp_path):
    from pvsst.sim.llm.gateway import Gateway
    from pvsst.sim.protocol import Protocol
    from pvsst.sim.topics import get_topic
    from pvsst.sim.trial.run import run_trial
    from pvsst.sim.trial.settings import TrialSetup

    (materials / "accounts.yaml").write_text('honest: "a{i:02d}"\nsingle_source: "c2{i:03d}"\n'
                                             'distributed_sources: "c3{i:03d}"\n')
    (materials / "post_system.txt").write_text("SYSTEM OF MY STUDY\n")
    config = TrialSetup(trial_id="t", model_name="scripted/imitate", topic=get_topic("ai_labels"),
                         condition="distributed_sources", seed=101, n_agents=4, n_rounds=2,
                         protocol=Protocol(materials=str(materials)))
    with Gateway() as gateway:
        result = run_trial(config, gateway)
    assert list(result.agents["agent_id"]) == ["a00", "a01", "a02", "a03", "c3000", "c3001", "c3002", "c3003"]
    posts = result.llm_calls[result.llm_calls["phase"] == "post"]
    systems = set(result.prompts.set_index("prompt_sha256").loc[posts["prompt_sha256"], "system"])
    assert systems == {"SYSTEM OF MY STUDY\n"}  # the file's last line break is part of the wording


def test_protocol_new_copies_and_refuses_to_overwrite(tmp_path, capsys):
    target = tmp_path / "fresh"
    assert main(["protocol", "new", str(target)]) == 0
    assert sorted(p.name for p in target.iterdir()) == sorted(MATERIAL_FILES)
    assert (target / "post.txt").read_text() == (default_materials_dir() / "post.txt").read_text()
    assert main(["protocol", "new", str(target)]) == 2
    assert "already exists" in capsys.readouterr().err


def test_editing_a_materials_file_after_freeze_makes_run_exit_2_naming_it(tmp_path, materials, capsys):
    spec = _spec_naming(tmp_path)
    assert main(["prereg", "freeze", str(spec)]) == 0
    lock = json.loads((tmp_path / "tiny.yaml.lock.json").read_text())
    assert set(lock["materials"]) == set(MATERIAL_FILES)
    out = tmp_path / "run"
    assert main(["run", str(spec), "--out", str(out), "--workers", "1"]) == 0
    assert sorted(p.name for p in (out / "materials").iterdir()) == sorted([*MATERIAL_FILES, ".pvsst-files"])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["materials"]["sha256"] == lock["materials"]
    metrics = json.loads(next((out / "trials").glob("*likes*/metrics.json")).read_text())
    assert metrics["render"] == "data" and metrics["markup_posts"] == 0
    capsys.readouterr()

    vote = materials / "vote.txt"
    vote.write_text(vote.read_text().replace("Rate each post", "Score each post"))
    assert main(["run", str(spec), "--out", str(tmp_path / "run2")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"pvsst: error: {vote.resolve()}") and "changed since the spec was frozen" in err
    assert len(err.splitlines()) == 1
    assert not (tmp_path / "run2").exists()
    assert main(["prereg", "verify", str(spec)]) == 1
    assert f"changed materials file: {vote.resolve()}" in capsys.readouterr().out
    assert main(["prereg", "freeze", str(spec)]) == 2  # re-freezing needs --force
    assert main(["prereg", "freeze", str(spec), "--force"]) == 0
    assert main(["run", str(spec), "--out", str(tmp_path / "run2")]) == 0
    prompts = pd.concat(pd.read_parquet(p) for p in (tmp_path / "run2" / "trials").glob("*/prompts.parquet"))
    assert prompts["user"].str.contains("Score each post").any()
