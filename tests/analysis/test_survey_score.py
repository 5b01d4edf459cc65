"""``pvsst survey score`` is one composition: it reads the run store once and writes every output after
computing them all.

- An audit run with a stated (verbalized) condition beside an enacted one writes the fidelity, audit and
  consistency tables; a cell run writes the fidelity and cell-run tables. In both, every unit's
  ``responses.parquet`` is read exactly once (``pandas.read_parquet`` is wrapped to count the reads), and
  the instrument, the scoring settings, the personas and the human answers once each.
- Bad input found late (an audit section whose personas are not matched sets: the audit comes after the
  fidelity table) exits 2 and leaves ``RUN/analysis/`` as it was.
"""
from __future__ import annotations

import collections
import json
from pathlib import Path

import pandas as pd
import pytest
from audit_helpers import audit_spec, read_analysis
from cell_run_fixture import census_population, write_cell_run
from survey_helpers import scripted_survey_run, write

from pvsst.experiments.cli import main


@pytest.fixture
def counted_reads(monkeypatch):
    """File name -> how often it was read, over every ``pandas.read_parquet`` and every text read."""
    reads: collections.Counter = collections.Counter()
    read_parquet, read_text = pd.read_parquet, Path.read_text

    def counting_parquet(path, *args, **kwargs):
        reads[str(path)] += 1
        return read_parquet(path, *args, **kwargs)

    def counting_text(self, *args, **kwargs):
        reads[str(self)] += 1
        return read_text(self, *args, **kwargs)

    monkeypatch.setattr(pd, "read_parquet", counting_parquet)
    monkeypatch.setattr(Path, "read_text", counting_text)
    return reads


def _reads_of(reads: collections.Counter, run: Path, names: tuple[str, ...]) -> dict[str, int]:
    return {path: n for path, n in reads.items() if path.startswith(str(run)) and Path(path).name in names}


def test_an_audit_run_is_read_once_and_gets_fidelity_audit_and_consistency(tmp_path, counted_reads):
    spec = audit_spec(sets=6, questions=1)
    spec["conditions"] = ["persona_profile", "persona_profile_verbalized"]
    path = write(tmp_path, spec, name="audit.yaml")
    run = tmp_path / "run"
    assert main(["survey", "run", str(path), "--out", str(run), "--workers", "1"]) == 0
    counted_reads.clear()

    assert main(["survey", "score", str(run)]) == 0

    units = sorted(str(p.parent / "responses.parquet") for p in (run / "units").glob("*/DONE"))
    assert len(units) >= 1
    reads = _reads_of(counted_reads, run, ("responses.parquet",))
    assert reads == {unit: 1 for unit in units}
    once = _reads_of(counted_reads, run, ("survey.json", "scoring.json", "personas.parquet", "human.parquet"))
    assert sorted(Path(p).name for p in once) == ["human.parquet", "personas.parquet", "scoring.json", "survey.json"]
    assert set(once.values()) == {1}
    for name in ("fidelity.csv", "audit.csv", "audit_shares.csv", "audit_groups.csv", "consistency.csv",
                 "consistency_personas.csv"):
        assert len(read_analysis(run, name)) > 0, name
    consistency = read_analysis(run, "consistency.csv")
    assert set(consistency["stated"]) == {"persona_profile_verbalized"}


def test_a_cell_run_is_read_once_and_gets_fidelity_and_the_cell_tables(tmp_path, counted_reads):
    run = write_cell_run(tmp_path, ["state", "sex"], population=census_population(2000))
    counted_reads.clear()

    assert main(["survey", "score", str(run), "--draws", "10"]) == 0  # reads are counted here, not intervals

    units = sorted(str(p.parent / "responses.parquet") for p in (run / "units").glob("*/DONE"))
    assert _reads_of(counted_reads, run, ("responses.parquet",)) == {unit: 1 for unit in units}
    assert set(_reads_of(counted_reads, run, ("cells.parquet", "scoring.json")).values()) == {1}
    written = {p.name for p in (run / "analysis").iterdir()}
    assert {"fidelity.csv", "estimates.csv", "state_scores.csv", "group_scores.csv", "cell_notes.json"} <= written


def test_bad_input_found_after_the_fidelity_table_leaves_nothing_written(tmp_path, capsys):
    run = scripted_survey_run(tmp_path, n=8, questions=1)
    stored = json.loads((run / "survey.json").read_text())
    stored["spec"]["audit"] = {"vary": {"sex": ["female", "male"]}, "matched_sets": 4}
    (run / "survey.json").write_text(json.dumps(stored))
    before = sorted(p.name for p in (run / "analysis").iterdir()) if (run / "analysis").is_dir() else []
    capsys.readouterr()

    assert main(["survey", "score", str(run)]) == 2

    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "personas.parquet" in err[0] and "audit_role" in err[0]
    after = sorted(p.name for p in (run / "analysis").iterdir()) if (run / "analysis").is_dir() else []
    assert after == before
