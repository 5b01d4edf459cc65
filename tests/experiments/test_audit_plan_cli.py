"""`pvsst audit plan`: the matched sets a target shift needs, read from a survey instrument or a study spec
(groups, options, the Benjamini-Hochberg family, alpha), the same numbers as the power model; bad input exits
2 with one line."""
from __future__ import annotations

import pytest
import yaml
from builders import audit_study_data
from cli_checks import refused

from pvsst.analysis.counterfactual.power import detectable_shift, omnibus_power, sets_needed
from pvsst.experiments.cli import main

GSS_AUDIT = "experiments/surveys/gss2018_audit.yaml"


def test_a_survey_instrument_is_planned_per_question(capsys):
    assert main(["audit", "plan", GSS_AUDIT, "--effect", "0.15"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # race x sex: 4 groups; 3 options; the model and 2 controls x 1 condition x 4 questions: a family of 12
    assert lines[0].startswith("gss2018_audit: a shift of 0.15 in one group's share of an option (base share 0.5), "
                               "4 groups, omnibus shares test at alpha 0.05 / 12")
    needed = sets_needed(0.15, n_groups=4, n_options=3, tests=12)
    power = omnibus_power(50, 0.15, n_groups=4, n_options=3, tests=12)
    mde = detectable_shift(50, n_groups=4, n_options=3, tests=12)
    assert lines[1] == (f"  natenvir (3 options): {needed:,} matched sets; the spec's 50 sets have power {power:.2f} "
                        f"and detect shifts of at least {mde:.3f} with 80% power")
    assert len(lines) == 5


def test_a_study_spec_is_planned_in_score_points(tmp_path, capsys):
    spec = tmp_path / "audited.yaml"
    spec.write_text(yaml.safe_dump(audit_study_data(sets=12), sort_keys=False))
    assert main(["audit", "plan", str(spec), "--effect", "0.5", "--score-sd", "1.2"]) == 0
    out = capsys.readouterr().out
    needed = sets_needed(0.5, n_groups=4, statistic="scores", score_sd=1.2, tests=2)
    assert "omnibus scores test at alpha 0.05 / 2" in out and f"post_stance (7 options): {needed:,} matched sets" in out


def test_without_a_spec_the_design_is_given(capsys):
    assert main(["audit", "plan", "--effect", "0.2", "--groups", "2", "--options", "2"]) == 0
    assert "question (2 options): 99 matched sets" in capsys.readouterr().out


@pytest.mark.parametrize("argv, field", [
    (["--effect", "0"], "effect"),
    (["--effect", "0.7"], "effect"),
    (["--effect", "0.1", "--base-share", "1.5"], "base_share"),
    (["--effect", "0.1", "--power", "1"], "power"),
])
def test_bad_plans_exit_two_with_one_line(capsys, argv, field):
    line = refused(capsys, ["audit", "plan", GSS_AUDIT, *argv])
    assert f": {field}: " in line, line


def test_an_instrument_without_an_audit_is_refused(capsys):
    line = refused(capsys, ["audit", "plan", "experiments/surveys/gss2018_spending.yaml", "--effect", "0.1"])
    assert "gss2018_spending.yaml: audit: the instrument has no audit section" in line
    line = refused(capsys, ["audit", "plan", "--effect", "0.1"])
    assert "give an instrument or study spec, or --groups and --options" in line


def test_a_refused_plan_prints_nothing_on_stdout(capsys):
    assert main(["audit", "plan", GSS_AUDIT, "--effect", "0.9"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
