"""Preregistration: freeze a spec by hash, verify it, and show what changed."""
from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from pvsst.core.errors import InputError
from pvsst.experiments.cli import main
from pvsst.experiments.prereg.freeze import freeze, verify
from pvsst.experiments.spec.lock import lock_path, read_lock
from pvsst.experiments.spec.study import canonical_spec, load_spec, spec_sha256

SPECS = Path(__file__).resolve().parents[2] / "experiments" / "specs"
SHIPPED = ("pvsst_confirmatory", "pvsst_unranked_extension", "quickstart", "scripted_smoke")


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "quickstart.yaml"
    path.write_text((SPECS / "quickstart.yaml").read_text())
    return path


def test_lock_path_sits_beside_the_spec():
    assert lock_path("a/b/quickstart.yaml") == Path("a/b/quickstart.yaml.lock.json")


def test_freeze_writes_hash_time_versions_and_the_canonical_spec(spec_file, capsys):
    assert main(["prereg", "freeze", str(spec_file)]) == 0
    out = capsys.readouterr().out
    spec = load_spec(spec_file)
    digest = spec_sha256(spec)
    assert digest in out and str(lock_path(spec_file)) in out
    stored = json.loads(lock_path(spec_file).read_text())
    assert stored["spec_sha256"] == digest
    assert stored["spec"] == canonical_spec(spec)
    frozen_at = datetime.fromisoformat(stored["frozen_at"])
    assert frozen_at.utcoffset().total_seconds() == 0
    assert abs((datetime.now(timezone.utc) - frozen_at).total_seconds()) < 300
    for package in ("python", "pvsst", "mesa", "litellm", "numpy", "pandas", "pydantic"):
        assert package in stored["versions"]
    assert stored["versions"]["numpy"] == __import__("numpy").__version__
    assert sorted(p.name for p in spec_file.parent.iterdir()) == ["quickstart.yaml", "quickstart.yaml.lock.json"]


def test_freezing_an_unchanged_spec_again_keeps_the_lock(spec_file):
    first = freeze(spec_file)
    before = lock_path(spec_file).read_bytes()
    second = freeze(spec_file)
    assert second == first
    assert lock_path(spec_file).read_bytes() == before


def test_edit_one_value_then_verify_exits_1_and_names_the_change(spec_file, capsys):
    freeze(spec_file)
    assert main(["prereg", "verify", str(spec_file)]) == 0
    assert "OK" in capsys.readouterr().out
    spec_file.write_text(spec_file.read_text().replace("n_rounds: 3", "n_rounds: 4"))
    assert main(["prereg", "verify", str(spec_file)]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out
    assert "changed: trial.n_rounds: 3 -> 4" in out
    assert "-  n_rounds: 3" in out.splitlines() and "+  n_rounds: 4" in out.splitlines()
    result = verify(spec_file)
    assert not result.ok and result.frozen_sha256 != result.current_sha256
    assert result.changed_fields == ["trial.n_rounds: 3 -> 4"]
    assert sum(line.startswith(("-  ", "+  ")) for line in result.diff) == 2


def test_comments_and_formatting_do_not_change_the_hash(spec_file):
    freeze(spec_file)
    data = yaml.safe_load(spec_file.read_text())
    spec_file.write_text("# reformatted, comments dropped\n" + yaml.safe_dump(data, default_flow_style=True))
    assert verify(spec_file).ok


def test_refreezing_a_changed_spec_needs_force(spec_file, capsys):
    first = freeze(spec_file)
    spec_file.write_text(spec_file.read_text().replace("seeds: [101, 211]", "seeds: [101, 211, 307]"))
    before = lock_path(spec_file).read_bytes()
    assert main(["prereg", "freeze", str(spec_file)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "spec_sha256" in err[0] and "--force" in err[0]
    assert lock_path(spec_file).read_bytes() == before
    assert main(["prereg", "freeze", str(spec_file), "--force"]) == 0
    assert read_lock(spec_file).spec_sha256 != first.spec_sha256
    assert verify(spec_file).ok


def test_verify_without_a_lock_exits_2(spec_file, capsys):
    assert main(["prereg", "verify", str(spec_file)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and ": lock: no lock file" in err[0]
    assert not lock_path(spec_file).exists()


def test_a_corrupt_or_tampered_lock_is_an_input_error(spec_file, capsys):
    freeze(spec_file)
    path = lock_path(spec_file)
    stored = json.loads(path.read_text())
    stored["spec"]["trial"]["n_agents"] = 7  # the copy no longer matches its recorded hash
    path.write_text(json.dumps(stored))
    assert main(["prereg", "verify", str(spec_file)]) == 2
    assert "corrupt lock file" in capsys.readouterr().err
    path.write_text("{not json")
    with pytest.raises(InputError, match="corrupt lock file"):
        verify(spec_file)
    with pytest.raises(InputError, match="corrupt lock file"):
        freeze(spec_file)
    assert freeze(spec_file, force=True).spec_sha256 == spec_sha256(load_spec(spec_file))


def test_a_failed_write_leaves_no_lock_and_no_temp_file(spec_file, monkeypatch):
    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        freeze(spec_file)
    assert [p.name for p in spec_file.parent.iterdir()] == ["quickstart.yaml"]


def test_show_prints_the_canonical_spec_and_its_hash(spec_file, capsys):
    assert main(["prereg", "show", str(spec_file)]) == 0
    out = capsys.readouterr().out
    digest = spec_sha256(load_spec(spec_file))
    assert out.rstrip().splitlines()[-1] == f"# sha256 {digest}"
    shown = yaml.safe_load(out)
    assert shown == canonical_spec(load_spec(spec_file))
    assert main(["prereg", "show", str(spec_file), "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out[:out.rindex("# sha256")]) == canonical_spec(load_spec(spec_file))


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_specs_match_their_committed_locks(name):
    result = verify(SPECS / f"{name}.yaml")
    assert result.ok, "\n".join(result.changed_fields)
    assert result.lock.spec_id == load_spec(SPECS / f"{name}.yaml").id


def test_a_preregistered_model_judge_freezes_its_templates(spec_file):
    """With ``analysis.stance_judge`` a model, the judge's wording governs the analysis: its two templates
    (here the materials directory's own pair) are in the lock, and editing one afterwards fails verify."""
    assert main(["protocol", "new", str(spec_file.parent / "materials")]) == 0
    materials = spec_file.parent / "materials"
    from pvsst.sim.materials import default_materials_dir

    for name in ("judge.txt", "judge_system.txt"):
        (materials / name).write_bytes((default_materials_dir() / name).read_bytes())
    data = yaml.safe_load(spec_file.read_text())
    data.setdefault("protocol", {})["materials"] = "materials"
    plain = spec_file.parent / "plain.yaml"
    plain.write_text(yaml.safe_dump(data))
    data["analysis"]["stance_judge"] = "scripted/imitate"
    spec_file.write_text(yaml.safe_dump(data))
    assert "judge.txt" in freeze(spec_file).materials and "judge.txt" not in freeze(plain).materials
    (materials / "judge.txt").write_text((materials / "judge.txt").read_text() + "Be careful.\n")
    result = verify(spec_file)
    assert not result.ok and result.changed_materials == [str(materials / "judge.txt")]
    assert verify(plain).ok
