"""A cell run's decision bank and estimates on a hand-made run: a cell whose calls all failed is left out
and reported through coverage, distributions are renormalised over the substantive options, and a
malformed cell table is a one-line input error."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from pvsst.analysis.survey.cells.estimates import cell_estimates, decision_bank
from pvsst.analysis.survey.cells.population import population_from_table
from pvsst.analysis.survey.units import QuestionScale, ScoredRun
from pvsst.core.errors import InputError

SCALE = QuestionScale("q", ("yes", "no"), ordinal=False)


def _cells() -> pd.DataFrame:
    return pd.DataFrame({"cell_id": ["a", "b", "c", "a", "b", "c"], "sex": ["f", "m", "m", "f", "m", "m"],
                         "age": ["young", "young", "old", "young", "young", "old"],
                         "geography": ["OH", "OH", "OH", "TX", "TX", "TX"], "population": [3, 1, 2, 2, 0, 2]})


def _responses(rows) -> pd.DataFrame:
    return pd.DataFrame([{"provider": "m", "condition": "c", "elicitation": "logprobs", "persona_id": cell,
                          "question": "q", "sample": 0, "answer": None, "parse_ok": ok,
                          "probabilities": json.dumps(p) if p else None} for cell, p, ok in rows])


def test_a_cell_whose_calls_failed_is_left_out_and_coverage_says_how_much():
    population = population_from_table(_cells())
    # c's only call failed; a's distribution carries 0.2 on a non-substantive code, renormalised away
    responses = _responses([("a", {"yes": 0.6, "no": 0.2, "dk": 0.2}, True), ("b", {"yes": 0.1, "no": 0.9}, True),
                            ("c", None, False)])
    run = ScoredRun({"settings": {}}, [SCALE], pd.DataFrame(), pd.DataFrame(), responses)
    table = cell_estimates(run, population).set_index(["domain", "option"])
    # answered cells a (5 people, yes 0.75) and b (1 person, yes 0.1) of 10 people
    assert table.loc[("all", "yes"), "estimate"] == pytest.approx((5 * 0.75 + 1 * 0.1) / 6, abs=1e-15)
    assert table.loc[("all", "yes"), "coverage"] == pytest.approx(0.6, abs=1e-15)
    assert table.loc[("OH", "yes"), "estimate"] == pytest.approx((3 * 0.75 + 0.1) / 4, abs=1e-15)
    assert table.loc[("OH", "yes"), "coverage"] == pytest.approx(4 / 6, abs=1e-15)
    assert table.loc[("TX", "yes"), "estimate"] == pytest.approx(0.75, abs=1e-15)
    assert ("age=old", "yes") not in table.index  # its only cell failed: no estimate, never an imputed one
    assert table.loc[("sex=f", "yes"), "estimate"] == pytest.approx(0.75) and (table["interval"] == "exact").all()


def test_sampled_answers_count_parsed_substantive_answers_only():
    responses = pd.DataFrame({"provider": "m", "condition": "c", "elicitation": "sample", "persona_id": ["a"] * 4,
                              "question": "q", "answer": ["yes", "no", "dk", None],
                              "parse_ok": [True, True, True, False], "probabilities": None})
    bank = decision_bank(responses, [SCALE])
    assert bank[["option", "count"]].values.tolist() == [["yes", 1.0], ["no", 1.0]]
    assert bank["probability"].isna().all()


@pytest.mark.parametrize("change, message", [
    (lambda f: f.drop(columns="population"), "cells.parquet: population: missing column"),
    (lambda f: f.assign(population=-1), "cells.parquet: population: must hold non-negative counts"),
    (lambda f: f.assign(sex=["f", "m", "m", "m", "m", "m"]), "cells.parquet: cell_id: cell 'a' has two sets"),
    (lambda f: pd.concat([f, pd.DataFrame({"cell_id": ["a"], "sex": ["f"], "age": ["young"], "geography": ["US"],
                                           "population": [9]})]),
     "cells.parquet: population: a cell's US count differs from the sum of its state counts"),
])
def test_malformed_cell_tables_are_one_line_input_errors(change, message):
    with pytest.raises(InputError) as caught:
        population_from_table(change(_cells()))
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_national_totals_beside_state_counts_are_checked_and_dropped():
    frame = pd.concat([_cells(), pd.DataFrame({"cell_id": ["a"], "sex": ["f"], "age": ["young"],
                                               "geography": ["US"], "population": [5]})])
    population = population_from_table(frame)
    assert "US" not in set(population.counts["state"]) and population.weights()["a"] == 5


def test_distributions_estimated_from_the_survey_are_not_marked_exact():
    population = population_from_table(_cells())
    rows = [("a", {"yes": 0.75, "no": 0.25}, True), ("b", {"yes": 0.1, "no": 0.9}, True),
            ("c", {"yes": 0.5, "no": 0.5}, True)]
    model = _responses(rows)
    marginal = model.assign(provider="scripted/marginal")
    uniform = model.assign(provider="scripted/uniform")
    run = ScoredRun({"settings": {}}, [SCALE], pd.DataFrame(), pd.DataFrame(), pd.concat([model, marginal, uniform]))
    table = cell_estimates(run, population)
    by_model = table.groupby("model")["interval"].unique().map(list).to_dict()
    # the marginal's distribution is the survey's weighted marginal: a sample of respondents, not exact
    assert by_model == {"m": ["exact"], "scripted/marginal": ["survey_sample"], "scripted/uniform": ["exact"]}
    marked = table[table["model"] == "scripted/marginal"]
    assert marked["ci_low"].isna().all() and marked["ci_high"].isna().all()
    assert marked["estimate"].to_numpy() == pytest.approx(table[table["model"] == "m"]["estimate"].to_numpy())
