"""MRP on planted populations: the fit recovers planted state and cell effects, each state's estimate never
sees its own respondents, the post-stratified estimate of a held-out state is its planted share, and a
state-level predictor carries a held-out state's own difference."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pvsst.analysis.survey.cells.mrp import (
    fit_state_logit,
    mrp_predictions,
    mrp_state_shares,
    poststratified_groups,
    standardised_predictors,
)
from pvsst.core.errors import InputError
from pvsst.personas.geography import REGION_OF_STATE, STATE_CODES

STATES = [s for s in STATE_CODES if s != "DC"][:30]
INTERCEPT, MALE, GROUP = -0.3, 0.8, {"a": 0.0, "b": -0.5, "c": 1.0}


def _expit(x):
    return 1.0 / (1.0 + np.exp(-x))


def planted_survey(state_effects: dict[str, float], per_state: int = 600, seed: int = 7) -> pd.DataFrame:
    """Respondents whose P(yes) = expit(intercept + 0.8 male + group effect + state effect)."""
    rng = np.random.default_rng(seed)
    states = np.repeat(list(state_effects), per_state)
    sex = rng.choice(["female", "male"], states.size)
    group = rng.choice(list(GROUP), states.size, p=[0.5, 0.3, 0.2])
    eta = (INTERCEPT + MALE * (sex == "male") + np.vectorize(GROUP.get)(group)
           + np.vectorize(state_effects.get)(states))
    answer = np.where(rng.random(states.size) < _expit(eta), "yes", "no")
    return pd.DataFrame({"sex": sex, "group": group, "state": states, "q": answer})


def population(states) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Six cells (sex x group) with state-specific counts."""
    cells = pd.DataFrame([(f"{s}|{g}", s, g) for s in ("female", "male") for g in GROUP],
                         columns=["cell_id", "sex", "group"])
    rng = np.random.default_rng(11)
    counts = pd.DataFrame([(c, state, int(rng.integers(50, 500))) for state in states for c in cells["cell_id"]],
                          columns=["cell_id", "state", "count"])
    return counts, cells


def test_the_fit_recovers_planted_state_and_cell_effects():
    rng = np.random.default_rng(3)
    planted = dict(zip(STATES, rng.normal(0.0, 0.5, len(STATES))))
    fit = fit_state_logit(planted_survey(planted), ["sex", "group"], "q", "yes", region_of=None)
    truth = pd.Series(planted)
    recovered = fit.state_effects.reindex(truth.index)
    # the intercept absorbs the state effects' mean: compare deviations from it
    error = (recovered - recovered.mean()) - (truth - truth.mean())
    print(f"state effects: correlation {np.corrcoef(recovered, truth)[0, 1]:.3f}, largest error "
          f"{error.abs().max():.3f}, sigma {fit.sigma}")
    assert np.corrcoef(recovered, truth)[0, 1] > 0.95
    assert error.abs().max() < 0.25
    assert 0.4 <= fit.sigma <= 0.8  # planted 0.5 (0.577 in these 30 draws)
    assert fit.coefficients["sex=male"] == pytest.approx(MALE, abs=0.08)
    assert fit.coefficients["group=b"] == pytest.approx(GROUP["b"], abs=0.08)
    assert fit.coefficients["group=c"] == pytest.approx(GROUP["c"], abs=0.1)
    assert fit.coefficients["intercept"] + recovered.mean() == pytest.approx(INTERCEPT + truth.mean(), abs=0.08)


@pytest.mark.parametrize("with_predictor", [False, True])
def test_the_mode_given_sigma_is_statsmodels_ridge_glm_on_the_same_design(with_predictor):
    """The Newton fit against statsmodels' penalised binomial GLM (``fit_regularized``, L2 only, the
    state columns penalised by 1 / sigma^2 and the fixed effects by ``FIXED_PRECISION``, both divided by
    the number of rows as statsmodels scales its penalty): the same mode to 1e-4, with and without a
    state-level predictor (one standardised column, a fixed effect)."""
    import statsmodels.api as sm

    from pvsst.analysis.survey.cells.mrp import FIXED_PRECISION

    rng = np.random.default_rng(5)
    survey = planted_survey(dict(zip(STATES, rng.normal(0.0, 0.5, len(STATES)))), per_state=300)
    covariate = dict(zip(STATES, rng.normal(50.0, 10.0, len(STATES))))
    predictors = {"v": covariate} if with_predictor else None
    fit = fit_state_logit(survey, ["sex", "group"], "q", "yes", region_of=None, sigmas=(0.4,),
                          state_predictors=predictors)
    grouped = survey.assign(y=(survey["q"] == "yes").astype(float)).groupby(["sex", "group", "state"])["y"]
    grouped = grouped.agg(["sum", "count"]).reset_index()
    states = sorted(STATES)
    fixed = ["intercept", "sex=male", "group=b", "group=c"]
    columns = [np.ones(len(grouped)), grouped["sex"] == "male", grouped["group"] == "b", grouped["group"] == "c"]
    if with_predictor:
        values = pd.Series(covariate)
        columns.append(grouped["state"].map((values - values.mean()) / values.std(ddof=0)))
        fixed.append("v")
    design = np.column_stack([*columns, *(grouped["state"] == s for s in states)]).astype(float)
    alpha = np.r_[np.full(len(fixed), FIXED_PRECISION), np.full(len(states), 0.4 ** -2.0)] / len(grouped)
    model = sm.GLM(np.column_stack([grouped["sum"], grouped["count"] - grouped["sum"]]), design,
                   family=sm.families.Binomial())
    reference = model.fit_regularized(alpha=alpha, L1_wt=0.0, opt_method="newton-cg").params
    ours = np.r_[fit.coefficients[fixed].to_numpy(), fit.state_effects[states].to_numpy()]
    assert list(fit.coefficients.index) == fixed
    assert fit.sigma == 0.4 and np.max(np.abs(ours - reference)) < 1e-4


def test_a_state_level_predictor_carries_a_held_out_states_own_difference():
    """States differ by 0.7 logit per standard deviation of a state covariate (plus N(0, 0.1) of their
    own); with the covariate each held-out state is predicted from its own value, without it only from
    its region: the predictor cuts the mean error of the held-out state shares by more than four times."""
    rng = np.random.default_rng(21)
    covariate = dict(zip(STATES, rng.normal(0.45, 0.08, len(STATES))))  # e.g. a previous vote share
    z = standardised_predictors({"v": covariate})["v"]
    effect = {s: 0.7 * z[s] + rng.normal(0.0, 0.1) for s in STATES}
    survey = planted_survey(effect, per_state=300, seed=4)
    counts, cells = population(STATES)
    cell_eta = {c: INTERCEPT + MALE * (s == "male") + GROUP[g] for c, s, g in cells.itertuples(index=False)}
    truth = counts.assign(p=[_expit(cell_eta[c] + effect[s]) for c, s in zip(counts["cell_id"], counts["state"])])
    truth = truth.groupby("state").apply(lambda f: np.average(f["p"], weights=f["count"]), include_groups=False)
    with_predictor = mrp_state_shares(survey, ["sex", "group"], "q", ["yes", "no"], counts, cells,
                                      state_predictors={"v": covariate})["yes"]
    without = mrp_state_shares(survey, ["sex", "group"], "q", ["yes", "no"], counts, cells)["yes"]
    error, error_without = (with_predictor - truth).abs(), (without - truth).abs()
    r_with, r_without = np.corrcoef(with_predictor, truth)[0, 1], np.corrcoef(without, truth)[0, 1]
    print(f"held-out states, mean |error|: with the predictor {error.mean():.4f} (max {error.max():.4f}), "
          f"without {error_without.mean():.4f}; correlation with the truth {r_with:.3f} vs {r_without:.3f}")
    assert error.mean() < 0.03 and error_without.mean() > 0.1
    assert error.mean() * 4 < error_without.mean()
    assert r_with > 0.95


def test_a_state_without_a_predictor_value_takes_its_mean_and_a_constant_predictor_is_refused():
    z = standardised_predictors({"v": {"OH": 0.4, "TX": 0.6, "CA": 0.5}})["v"]
    assert z == pytest.approx({"OH": -1.2247449, "TX": 1.2247449, "CA": 0.0})
    survey = planted_survey({"OH": 0.0, "TX": 0.0, "CA": 0.0}, per_state=100)
    fit = fit_state_logit(survey, ["sex"], "q", "yes", region_of=None, state_predictors={"v": {"OH": 0.4, "TX": 0.6}})
    assert "v" in fit.coefficients.index
    with pytest.raises(InputError, match="must vary"):
        standardised_predictors({"v": {"OH": 0.5, "TX": 0.5}})


def test_group_shares_pool_every_states_cell_predictions():
    survey = planted_survey(dict.fromkeys(STATES[:6], 0.0), per_state=2000)
    counts, cells = population(STATES[:6])
    predictions = mrp_predictions(survey, ["sex", "group"], "q", ["yes", "no"], counts, cells, region_of=None)
    groups = poststratified_groups(predictions, counts, cells, ["sex", "group"])
    assert list(groups.index) == ["sex=female", "sex=male", "group=a", "group=b", "group=c"]
    merged = counts.merge(cells, on="cell_id")
    for name, row in groups.iterrows():
        attribute, level = name.split("=")
        part = merged[merged[attribute] == level]
        row_of = list(predictions.cell_ids).index
        p = [predictions.shares[s][row_of(c), 0] for c, s in zip(part["cell_id"], part["state"])]
        assert row["yes"] == pytest.approx(np.average(p, weights=part["count"]), abs=1e-12)
    female = cells[cells["sex"] == "female"]["cell_id"]
    planted = counts[counts["cell_id"].isin(female)].assign(
        p=lambda f: f["cell_id"].map(lambda c: _expit(INTERCEPT + GROUP[c.split("|")[1]])))
    expected = np.average(planted["p"], weights=planted["count"])
    assert groups.loc["sex=female", "yes"] == pytest.approx(expected, abs=0.02)


def test_without_state_effects_the_held_out_state_gets_its_planted_share():
    survey = planted_survey(dict.fromkeys(STATES, 0.0))
    counts, cells = population(STATES)
    shares = mrp_state_shares(survey, ["sex", "group"], "q", ["yes", "no"], counts, cells)
    cell_p = {c: _expit(INTERCEPT + MALE * (s == "male") + GROUP[g]) for c, s, g in cells.itertuples(index=False)}
    truth = counts.assign(p=counts["cell_id"].map(cell_p)).groupby("state").apply(
        lambda f: np.average(f["p"], weights=f["count"]), include_groups=False)
    error = (shares["yes"] - truth.reindex(shares.index)).abs()
    print(f"MRP against the planted state shares: mean |error| {error.mean():.4f}, max {error.max():.4f}")
    assert error.max() < 0.02
    assert np.allclose(shares.sum(axis=1), 1.0)


def test_a_states_estimate_never_sees_its_own_respondents():
    rng = np.random.default_rng(5)
    survey = planted_survey(dict(zip(STATES, rng.normal(0.0, 0.4, len(STATES)))), per_state=200)
    counts, cells = population(STATES)
    before = mrp_state_shares(survey, ["sex", "group"], "q", ["yes", "no"], counts, cells)
    changed = survey.copy()
    held = "CA"
    changed.loc[changed["state"] == held, "q"] = "yes"  # every Californian respondent now says yes
    after = mrp_state_shares(changed, ["sex", "group"], "q", ["yes", "no"], counts, cells)
    dropped = mrp_state_shares(survey[survey["state"] != held], ["sex", "group"], "q", ["yes", "no"], counts, cells)
    assert after.loc[held, "yes"] == before.loc[held, "yes"] == dropped.loc[held, "yes"]
    others = after.drop(index=held)["yes"] - before.drop(index=held)["yes"]
    assert (others.abs() > 1e-6).all()  # California's answers do reach every other state's model


def test_a_held_out_state_takes_its_regions_effect():
    region_effect = {"Northeast": -0.6, "Midwest": 0.0, "South": 0.6, "West": -0.2}
    survey = planted_survey({s: region_effect[REGION_OF_STATE[s]] for s in STATES}, per_state=400)
    counts, cells = population(STATES)
    with_region = mrp_state_shares(survey, ["sex", "group"], "q", ["yes", "no"], counts, cells)
    without = mrp_state_shares(survey, ["sex", "group"], "q", ["yes", "no"], counts, cells, region_of=None)
    cell_eta = {c: INTERCEPT + MALE * (s == "male") + GROUP[g] for c, s, g in cells.itertuples(index=False)}
    truth = counts.assign(p=[_expit(cell_eta[c] + region_effect[REGION_OF_STATE[s]])
                             for c, s in zip(counts["cell_id"], counts["state"])])
    truth = truth.groupby("state").apply(lambda f: np.average(f["p"], weights=f["count"]), include_groups=False)
    error = (with_region["yes"] - truth).abs()
    assert error.max() < 0.03
    assert (without["yes"] - truth).abs().mean() > 2 * error.mean()


def test_more_than_two_options_are_modelled_one_against_the_rest_and_sum_to_one():
    rng = np.random.default_rng(9)
    survey = planted_survey(dict.fromkeys(STATES[:8], 0.0), per_state=150)
    survey["q"] = np.where(survey["q"] == "yes", rng.choice(["a", "b"], len(survey)), "c")
    counts, cells = population(STATES[:8])
    predictions = mrp_predictions(survey, ["sex", "group"], "q", ["a", "b", "c"], counts, cells)
    assert all(np.allclose(p.sum(axis=1), 1.0) for p in predictions.shares.values())


def test_missing_columns_and_a_survey_from_one_state_only_raise_input_errors():
    survey = planted_survey({"OH": 0.0}, per_state=50)
    counts, cells = population(["OH"])
    with pytest.raises(InputError, match="no respondent outside OH"):
        mrp_state_shares(survey, ["sex", "group"], "q", ["yes", "no"], counts, cells)
    with pytest.raises(InputError, match="no column 'party'"):
        mrp_state_shares(survey, ["sex", "party"], "q", ["yes", "no"], counts, cells)
