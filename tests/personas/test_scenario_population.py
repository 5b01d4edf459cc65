"""Scenario attributes of census personas: race and Hispanic origin, households, household income.

Household sizes are planted (no size table ships with pvsst); each check compares a draw with the
distribution it was drawn from, within sampling error.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from pvsst.core.errors import InputError
from pvsst.personas.census import load_census_tables
from pvsst.personas.household_income import IncomeBands, load_household_income_model
from pvsst.personas.households import HouseholdSizes, assign_households
from pvsst.personas.scenario_population import scenario_population
from pvsst.personas.synthesis import synthesize
from pvsst.personas.vocabulary import RACES

PLANTED = HouseholdSizes(shares=(0.28, 0.42, 0.18, 0.08, 0.04), source="planted for the test")


@pytest.fixture(scope="module")
def population():
    people = synthesize(25_000, geography="CA,GA,OH", seed=11).personas
    return people, scenario_population(people, PLANTED, seed=5)


def test_household_sizes_reproduce_their_distribution(population):
    _, result = population
    homes = result.personas.groupby("household_id").agg(size=("household_size", "first"), n=("persona_id", "size"),
                                                        states=("state", "nunique"))
    assert (homes["size"] == homes["n"]).all() and (homes["states"] == 1).all()
    # The last household of each state is cut to the personas left: leave the three of them out.
    last = result.personas.groupby("state", observed=True)["household_id"].max()
    full = homes.drop(index=last.to_numpy())
    observed = np.bincount(full["size"], minlength=6)[1:]
    expected = np.asarray(PLANTED.shares) * observed.sum()
    chi2 = float(((observed - expected) ** 2 / expected).sum())
    p_value = float(stats.chi2.sf(chi2, df=len(observed) - 1))
    assert p_value > 0.001, (observed.tolist(), expected.round(1).tolist(), p_value)
    variance = float(np.dot(PLANTED.shares, (PLANTED.sizes - PLANTED.mean_size) ** 2))
    assert abs(full["size"].mean() - PLANTED.mean_size) < 4 * np.sqrt(variance / len(full))


def test_same_seed_same_population_and_members_share_income(population):
    people, result = population
    again = scenario_population(people, PLANTED, seed=5).personas
    assert again.columns.equals(result.personas.columns)
    assert all(again[c].astype(str).equals(result.personas[c].astype(str)) for c in again.columns)
    other = scenario_population(people, PLANTED, seed=6).personas
    assert not other["household_id"].equals(result.personas["household_id"])
    per_home = result.personas.groupby("household_id")[
        ["household_income", "household_income_band", "region"]
    ].nunique()
    assert (per_home == 1).all().all()


def test_hispanic_origin_keeps_the_census_share_and_draws_race_from_the_projections(population):
    people, result = population
    frame = result.personas
    hispanic = frame["hispanic_origin"] == "Hispanic"
    assert (hispanic == (people["race_ethnicity"] == "hispanic")).all()
    kept = frame[~hispanic]
    assert (kept["race"].astype(str) == kept["race_ethnicity"].astype(str)).all()
    tables = load_census_tables()
    band = frame.loc[hispanic, "age_band"].cat.codes.to_numpy()
    sex = frame.loc[hispanic, "sex"].cat.codes.to_numpy()
    expected = tables.race_given_hispanic_age_sex[:, band, sex].mean(axis=1)
    observed = frame.loc[hispanic, "race"].value_counts(normalize=True).reindex(list(RACES)).to_numpy()
    se = np.sqrt(expected * (1 - expected) / hispanic.sum())
    assert np.all(np.abs(observed - expected) < 4 * se), (observed.round(4), expected.round(4))


def test_household_income_follows_the_donors_of_the_first_members_cell(population):
    _, result = population
    frame = result.personas
    heads = frame[frame["household_member"] == 0]
    # Heads who are white women 45-54 with a college degree in the West (California): one donor cell.
    cell = heads[(heads["age"].between(45, 54)) & (heads["sex"] == "female") & (heads["race_ethnicity"] == "white")
                 & heads["education"].isin(["bachelors_degree", "advanced_degree"]) & (heads["region"] == "West")]
    model = load_household_income_model()
    donors = model.donors(int(model.cell_index(3, 1, 1, 1, 3)))
    expected = float((donors["famincr"] >= 8).mean())          # famincr 8 = $70,000-$79,999
    observed = float((cell["household_income_band"] == "$70,000 or more").mean())
    assert len(cell) > 80 and model.pool_level[model.cell_index(3, 1, 1, 1, 3)] == 0
    assert abs(observed - expected) < 4 * np.sqrt(expected * (1 - expected) / len(cell)), (observed, expected)
    assert set(frame["household_income_band"].cat.categories) == set(IncomeBands().labels)
    assert result.provenance["household_income"].startswith("CCES 2016 famincr")


def test_income_bands_with_more_edges_and_bad_input():
    people = synthesize(200, geography="OH", seed=1).personas
    three = scenario_population(people, PLANTED, seed=1, income_bands=IncomeBands((40_000, 100_000))).personas
    assert list(three["household_income_band"].cat.categories) == ["under $40,000", "$40,000-$99,999",
                                                                   "$100,000 or more"]
    with pytest.raises(InputError, match="edges must increase"):
        IncomeBands((100_000, 40_000))
    with pytest.raises(InputError, match="education"):
        scenario_population(people.drop(columns="education"), PLANTED, seed=1)
    with pytest.raises(InputError, match="households.within"):
        assign_households(people, PLANTED, np.random.default_rng(0), within="county")
    with pytest.raises(InputError, match="source"):
        HouseholdSizes(shares=(1.0,), source=" ")
