"""``pvsst personas vectors``: identity vectors of a persona file; bad input is one line, exit 2, nothing written."""
from __future__ import annotations

import pytest
from cli_checks import refused

from pvsst.core.input_files import file_sha256
from pvsst.experiments.cli import main
from pvsst.personas.records import write_personas
from pvsst.personas.synthesis import synthesize
from pvsst.sim.identity.vectors import load_vectors
from pvsst.sim.llm.providers import embedded


@pytest.fixture(scope="module")
def persona_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("personas") / "p.parquet"
    write_personas(synthesize(40, seed=3).personas, path)
    return path


@pytest.mark.parametrize("arguments, needle", [
    (["--attributes", "sex,religion_of_pet"], "p.parquet: religion_of_pet: the persona table has no column"),
    (["--attributes", "sex", "--model", "openai/gpt-4o"], "identity vectors need a local llama.cpp model"),
    (["--attributes", "age"], "age: has"),
    (["--attributes", "sex", "--n-personas", "41"], "n_personas: must lie in 1..40"),
    (["--attributes", "sex", "--span", "middle"], "span: must be one of user, prompt, last"),
])
def test_bad_input_is_one_line_and_writes_nothing(capsys, persona_file, tmp_path, arguments, needle):
    out = tmp_path / "v.npz"
    line = refused(capsys, ["personas", "vectors", str(persona_file), "--out", str(out), *arguments])
    assert needle in line, line
    assert not out.exists()


@pytest.mark.embedded
def test_writes_a_validated_artifact(capsys, persona_file, tmp_path):
    out = tmp_path / "v.npz"
    assert main(["personas", "vectors", str(persona_file), "--attributes", "sex,region", "--out", str(out),
                 "--n-personas", "6", "--questions-per-persona", "1", "--layers", "10-12", "--seed", "2"]) == 0
    printed = capsys.readouterr().out
    assert f"sha256 {file_sha256(out)}" in printed
    vectors = load_vectors(out, model_sha256=embedded.model_sha256())
    header = vectors.header
    assert header["layers"] == [10, 11, 12] and header["prompts"] == 6 and len(header["persona_ids"]) == 6
    assert header["persona_file_sha256"] == file_sha256(persona_file) and header["card_style"] == "profile"
    assert sum(c["personas"] for c in header["attributes"]["sex"].values()) == 6
    assert vectors.vectors.shape == (len(header["entries"]), 3, 576)
