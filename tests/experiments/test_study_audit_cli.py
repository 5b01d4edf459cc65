"""A study spec's ``audit`` section through the command line: ``pvsst run`` plays the audit after the
trials (one unit per model x topic, resumable, in the manifest), ``pvsst analyze`` writes the audit
tables and ``pvsst report`` shows them; bad audit settings exit 2 with one line and write nothing."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from builders import audit_study_data
from cli_checks import refused

from pvsst.experiments.cli import main


def _spec(directory: Path, data: dict, name: str = "audited") -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def audited_run(tmp_path_factory):
    directory = tmp_path_factory.mktemp("study-audit")
    spec = _spec(directory, audit_study_data(sets=12))
    assert main(["prereg", "freeze", str(spec)]) == 0
    run = directory / "run"
    assert main(["run", str(spec), "--out", str(run), "--workers", "1"]) == 0
    return spec, run


def test_the_run_plays_the_audit_after_the_trials(audited_run):
    _, run = audited_run
    manifest = json.loads((run / "manifest.json").read_text())
    (unit,) = manifest["audits"]
    assert unit == "audit-scripted-planted_stance_shift-ai_labels"
    entry = manifest["audits"][unit]
    assert entry["status"] == "done" and entry["members"] == 12 * 4 * 2 and entry["calls"] == 2 * 96
    assert (entry["seed"], entry["condition"]) == (101, "control")
    assert manifest["audit_finished_at"] and manifest["finished_at"]
    assert [r.get("job") for r in manifest["runs"]] == [None, "audits"]
    assert (run / "audits" / unit / "DONE").is_file() and len(manifest["trials"]) == 2


def test_a_rerun_skips_the_finished_audit(audited_run, capsys):
    spec, run = audited_run
    capsys.readouterr()
    assert main(["run", str(spec), "--out", str(run), "--workers", "1"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-2].startswith("2 trials: 0 done, 0 failed, 2 skipped; 0 calls")
    assert lines[-1] == "1 audit units: 0 done, 0 failed, 1 skipped; 0 calls, 0 cache hits, $0.0000"


def test_analyze_and_report_show_the_audit(audited_run):
    _, run = audited_run
    assert main(["analyze", str(run), "--homophily-replicates", "2"]) == 0
    questions = pd.read_csv(run / "analysis" / "study_audit.csv")
    assert questions["question"].tolist() == ["post_stance", "net_vote"]
    assert (questions[["n_sets", "n_groups"]] == [12, 4]).all().all()
    assert questions["omnibus_statistic"].eq("scores").all() and questions["null_n_sets"].eq(12).all()
    shares = pd.read_csv(run / "analysis" / "study_audit_shares.csv")
    assert set(shares["audit_role"]) == {"audit", "arity_null"}
    assert sorted(shares.loc[shares["question"] == "post_stance", "option"].unique()) == list(range(-3, 4))
    assert sorted(shares.loc[shares["question"] == "net_vote", "option"].unique()) == list(range(-5, 6))
    assert main(["report", str(run)]) == 0
    report = (run / "report" / "report.md").read_text()
    assert "### Counterfactual first-round audit" in report and "| post_stance |" in report.replace("  ", " ")
    assert questions["mde_unit"].eq("score").all() and (questions["mde"] > 0).all()
    assert questions["bh_family"].iloc[0].startswith("omnibus: 2 tests (every model x topic x question)")
    for row in questions.itertuples():
        verdict = "flagged; at this size the audit" if row.flagged else "nothing flagged; this audit"
        assert (f"ai_labels, {row.question}: {verdict} detects shifts of at least {row.mde:.3f} in one group's "
                f"mean score (score points) with 80% power") in report
    assert (run / "report" / "figures" / "study_audit_disparity.png").is_file()


@pytest.mark.parametrize("change, field", [
    ({"personas": {"source": "default"}}, "audit"),
    ({"audit": {"vary": {"nickname": ["a", "b"]}, "matched_sets": 4}}, "audit.vary"),
    ({"audit": {"vary": {"sex": ["female", "male"]}, "matched_sets": 1}}, "audit.matched_sets"),
    ({"audit": {"vary": {"sex": ["female", "male"]}, "matched_sets": 61}}, "audit.matched_sets"),
    ({"audit": {"vary": {"sex": ["female", "male"]}, "matched_sets": 4, "alpha": 1.5}}, "audit.alpha"),
    ({"audit": {"vary": {"sex": ["female", "male"]}, "matched_sets": 4, "permutations": 10}}, "audit.permutations"),
    ({"trial": {"votes_per_voter": 0}}, "audit"),
])
def test_bad_audit_settings_are_refused_at_freeze(tmp_path, capsys, change, field):
    data = audit_study_data(sets=4)
    data.update({k: v for k, v in change.items() if k != "trial"})
    if "trial" in change:
        data["trial"] = change["trial"]
    spec = _spec(tmp_path, data)
    line = refused(capsys, ["prereg", "freeze", str(spec)])
    assert f"{spec}: {field}" in line or f"{field}:" in line, line
    assert not Path(f"{spec}.lock.json").exists()


def test_a_persona_file_without_the_varied_attribute_stops_the_run_before_any_trial(tmp_path, capsys):
    from pvsst.personas.synthesis import synthesize

    synthesize(20, geography="US", seed=1).personas.drop(columns="race_ethnicity").to_csv(
        tmp_path / "people.csv", index=False)
    data = audit_study_data(sets=4)
    data["personas"] = {"source": "file", "path": "people.csv", "card_style": "pvsst_short"}
    spec = _spec(tmp_path, data)
    assert main(["prereg", "freeze", str(spec)]) == 0
    line = refused(capsys, ["run", str(spec), "--out", str(tmp_path / "run")])
    assert "audit" in line and "race_ethnicity" in line, line
    assert not (tmp_path / "run").exists()
