"""Stated-vs-enacted consistency and the counterfactual audit, from ``pvsst survey score`` to the report.

- Consistency: ``scripted/planted_answer_null`` states a uniform distribution over the three options
  (``verbalized``) and samples one answer from it (``sample``), under the same profile card. Every
  persona's total-variation distance between a uniform distribution and one answer is exactly
  1 - 1/3 = 2/3; the population's mean enacted distribution is near uniform, so the population
  distance is small (40 personas: below 0.22, the 99th percentile of the TV between the uniform
  distribution and the shares of 40 uniform draws, by simulation; its mean is 0.09). The scripted uniform control pairs
  ``reference_verbalized`` with ``reference`` and gives the same 2/3.
- The report shows both sections and draws both figures; the audit figure's band is the null's range.
"""
from __future__ import annotations

import pytest
from audit_helpers import audit_spec, read_analysis, run_and_score
from builders import small_instrument

from pvsst.analysis.report.survey.build import build_survey_report

pytestmark = pytest.mark.slow


def test_stated_and_enacted_answers_are_compared_per_persona_and_in_the_population(tmp_path):
    spec = small_instrument(
        model="scripted/planted_answer_null",
        conditions=["persona_profile", "persona_profile_verbalized"],
        controls=["uniform"],
    )
    spec["personas"].update(n=40)
    spec["execution"]["chunk_size"] = 40
    run = run_and_score(tmp_path, spec, "consistency")
    summary = read_analysis(run, "consistency.csv")
    model = summary[(summary["model"] == "scripted/planted_answer_null")].set_index(["question", "metric"])
    assert set(model.index.get_level_values("question")) == {"natenvir", "natheal", "all"}
    assert model.xs("mean_tv_distance", level="metric")["value"].to_numpy() == pytest.approx([2 / 3] * 3, abs=1e-6)
    population = model.xs("population_tv_distance", level="metric").drop("all")
    assert (population["value"] < 0.22).all() and (population["ci_low"] <= population["value"]).all()
    assert set(summary["stated"]) == {"persona_profile_verbalized", "reference_verbalized"}
    control = summary[(summary["model"] == "scripted/uniform") & (summary["metric"] == "mean_tv_distance")]
    assert control["value"].to_numpy() == pytest.approx([2 / 3] * 3, abs=1e-6)
    per_persona = read_analysis(run, "consistency_personas.csv")
    assert len(per_persona[per_persona["model"] == "scripted/planted_answer_null"]) == 80
    report = build_survey_report(run, formats=("md",), figure_formats=("png",))
    text = (run / "report" / "report.md").read_text()
    assert "### Stated vs enacted answers" in text and "Counterfactual persona audit" not in text
    figure = dict((f.name, f) for _, f in report.figures)["survey_consistency"]
    assert len(figure.data) == 2 * 2 * 3  # panels (model, control) x metrics x questions (and "all")


def test_audit_section_and_figure_in_the_report(tmp_path, capsys):
    run = run_and_score(tmp_path, audit_spec(sets=20, questions=2), "small-audit")
    printed = capsys.readouterr().out
    questions = read_analysis(run, "audit.csv")
    for row in questions.itertuples():  # pvsst survey score prints each question's power beside the table
        verdict = "flagged; at this size the audit" if row.flagged else "nothing flagged; this audit"
        assert f"{row.question}: {verdict} detects shifts of at least {row.mde:.3f}" in printed, printed
    assert list(questions["n_sets"]) == [20, 20] and (questions["null_n_sets"] == 20).all()
    shares = read_analysis(run, "audit_shares.csv")
    assert set(shares["audit_role"]) == {"audit", "arity_null"}
    groups = read_analysis(run, "audit_groups.csv")
    assert {"paired_p", "paired_p_bh", "score_gap"} <= set(groups.columns) and len(groups) == 2 * 2 * 4
    report = build_survey_report(run, formats=("md",), figure_formats=("png",))
    text = (run / "report" / "report.md").read_text()
    assert "### Counterfactual persona audit" in text and "arity-matched null" in text
    assert text.count("in one group's share of an option with 80% power") == 2 and "MDE (80%)" in text
    for row in questions.itertuples():
        verdict = "flagged; at this size" if row.flagged else "nothing flagged; this audit detects"
        assert f"{row.question}: {verdict}" in text and f"at least {row.mde:.3f}" in text
    assert "- Benjamini-Hochberg families: omnibus: 2 tests (every source x question)" in text
    figure = dict((f.name, f) for _, f in report.figures)["survey_audit_disparity"]
    data = figure.data
    null = shares[shares["audit_role"] == "arity_null"]
    for row in data.itertuples():
        gaps = null[(null["question"] == row.question) & (null["option"] == row.option)]["share_gap"]
        assert (row.null_low, row.null_high) == pytest.approx((gaps.min(), gaps.max()), abs=1e-5)
    assert len(data) == 2 * 4 and (run / "report" / "figures" / "survey_audit_disparity.png").is_file()


@pytest.mark.slow
def test_a_logprobs_audit_measures_whole_distributions_not_modal_answers(tmp_path):
    spec = audit_spec(sets=10, questions=1, arity_null=False)
    spec["conditions"] = ["persona_profile_logprobs"]
    run = run_and_score(tmp_path, spec, "logprobs-audit")
    questions = read_analysis(run, "audit.csv")
    assert (questions["elicitation"] == "logprobs").all() and questions["note"].isna().all()
    # one group of four shifted by 0.15 (TV 0.15 to each other member, 0 between the rest) gives a mean
    # pairwise TV of 0.15 x 3 / 6 = 0.075; the flip rate is the expected one, below the modal answers' 1
    # (1 - sum_k prod_g p_gk = 1 - (1/3)^3 (1/3 + 0.15 + 2 (1/3 - 0.075)) = 1 - 1/27 in every set)
    row = questions.iloc[0]
    assert row["member_tv"] == pytest.approx(0.075, abs=1e-6) and row["flip_rate"] == pytest.approx(1 - 1 / 27)
    assert row["member_tv_low"] <= row["member_tv"] <= row["member_tv_high"]
    # every member of a group answers with the same distribution: no noise, so any shift is flagged
    assert row["omnibus_statistic"] == "distributions" and row["mde_unit"] == "probability" and row["mde"] == 0
    assert bool(row["flagged"])
    shares = read_analysis(run, "audit_shares.csv")
    assert shares["share_gap"].abs().max() == pytest.approx(0.15, abs=1e-6)
