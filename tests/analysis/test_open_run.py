"""``pvsst.open_run``: a run directory as the frames a notebook reads.

Each frame is checked against the files it comes from (row counts summed over the complete trials or
units, the manifest as written, each analysis table as ``pvsst analyze`` wrote it), for a study run and a
survey run, and an unfinished trial is shown to be left out as ``pvsst analyze`` leaves it out.
"""
from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from runner_helpers import small_smoke_spec
from survey_helpers import scripted_survey_run

import pvsst
from pvsst.core.errors import InputError
from pvsst.experiments.cli import main


def parquet_rows(folders, table: str) -> int:
    return sum(len(pd.read_parquet(f / f"{table}.parquet")) for f in folders if (f / f"{table}.parquet").is_file())


def test_study_run_tables_match_the_run_store(tmp_path):
    spec = small_smoke_spec(tmp_path / "spec", "[101]")
    run = tmp_path / "run"
    assert main(["run", str(spec), "--out", str(run), "--workers", "1"]) == 0
    assert main(["analyze", str(run)]) == 0
    trials = sorted(p for p in (run / "trials").iterdir() if (p / "DONE").is_file())
    assert len(trials) == 8                      # 2 topics x 4 arms, seed 101

    tables = pvsst.open_run(run)

    assert tables.kind == "study"
    assert tables.manifest == json.loads((run / "manifest.json").read_text())
    assert sorted(tables.trials["trial_id"]) == [p.name for p in trials]
    for name in ("agents", "posts", "votes", "exposures", "llm_calls"):
        frame = getattr(tables, name)
        assert len(frame) == parquet_rows(trials, name) > 0, name
        assert set(frame["trial_id"]) <= {p.name for p in trials}, name
    assert set(tables.posts["trial_id"]) == {p.name for p in trials}   # control trials have no exposures
    assert tables.responses.empty and tables.human.empty
    written = {p.stem for p in (run / "analysis").glob("*.csv")}
    assert {"contrasts", "trial_outcomes"} <= written == set(tables.analysis)
    pd.testing.assert_frame_equal(tables.analysis["contrasts"], pd.read_csv(run / "analysis" / "contrasts.csv"))
    assert "study run" in repr(tables) and "posts (" in repr(tables)

    # A trial without DONE (interrupted) is not read, as `pvsst analyze` does not read it.
    (trials[0] / "DONE").unlink()
    partial = pvsst.open_run(run)
    assert len(partial.trials) == 7
    assert len(partial.posts) == parquet_rows(trials[1:], "posts")


def test_survey_run_tables_match_the_run_store(tmp_path):
    run = scripted_survey_run(tmp_path, n=8, questions=2)
    assert main(["survey", "score", str(run)]) == 0
    units = sorted(p.parent for p in (run / "units").glob("*/DONE"))

    tables = pvsst.open_run(run)

    assert tables.kind == "survey"
    assert tables.manifest == json.loads((run / "manifest.json").read_text())
    assert len(tables.responses) == parquet_rows(units, "responses") > 0
    assert len(tables.llm_calls) == parquet_rows(units, "llm_calls")
    pd.testing.assert_frame_equal(tables.personas, pd.read_parquet(run / "personas.parquet"))
    pd.testing.assert_frame_equal(tables.human, pd.read_parquet(run / "human.parquet"))
    assert tables.trials.empty and tables.posts.empty
    pd.testing.assert_frame_equal(tables.analysis["fidelity"], pd.read_csv(run / "analysis" / "fidelity.csv"))


def test_open_run_names_what_is_missing(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        pvsst.open_run(tmp_path / "nowhere")
    (tmp_path / "run").mkdir()
    with pytest.raises(InputError, match="manifest.json: missing"):
        pvsst.open_run(tmp_path / "run")
    shutil.rmtree(tmp_path / "run")
