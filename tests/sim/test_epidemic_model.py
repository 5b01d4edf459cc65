"""The epidemic model: conservation, determinism, reporting that reproduces its bank, calibrated transmission."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pvsst.core.errors import InputError
from pvsst.sim.epidemic.bank import CASE_LEVELS, HOUSEHOLD_LEVELS, ReportingBank
from pvsst.sim.epidemic.model import EpidemicModel
from pvsst.sim.epidemic.settings import EpidemicSettings
from pvsst.sim.epidemic.transmission import transmission_rates

CELLS = ("c_low", "c_mid", "c_high")
# A distinct yes-probability per cell and case level (planted).
P_YES = {"c_low": (0.05, 0.10, 0.15, 0.20), "c_mid": (0.40, 0.45, 0.50, 0.55), "c_high": (0.80, 0.85, 0.90, 0.95)}


def bank_table(chained: bool = False) -> pd.DataFrame:
    rows = []
    for cell, ps in P_YES.items():
        for level, p in zip(CASE_LEVELS, ps):
            if not chained:
                rows.append({"cell_id": cell, "case_level": level, "p_yes": p})
                continue
            for household, q in zip(HOUSEHOLD_LEVELS, (p, 0.9, 0.1)):
                rows.append({"cell_id": cell, "case_level": level, "household": household, "p_yes": q})
    return pd.DataFrame(rows)


def population(n: int, seed: int = 0, household: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"cell_id": rng.choice(CELLS, n), "region": rng.choice(["atl", "sf"], n, p=[0.6, 0.4]),
                         "household_id": [f"h{i // household}" for i in range(n)]})


def run(people, settings, seed=7, chained=False) -> EpidemicModel:
    model = EpidemicModel(people, ReportingBank.from_table(bank_table(chained), CELLS), settings, seed)
    model.run()
    return model


def test_compartments_sum_to_the_population_every_day_and_same_seed_same_tables():
    people = population(20_000)
    settings = EpidemicSettings(days=40, r0=2.0, initial_infected=40)
    model = run(people, settings)
    days = model.region_days()
    compartments = days[["susceptible", "exposed", "infectious", "recovered"]].sum(axis=1)
    assert (compartments == days["population"]).all()
    assert days.groupby("day")["population"].sum().eq(len(people)).all() and days["day"].nunique() == 41
    assert days["new_infections"].sum() > 400         # the epidemic grew (r0 = 2)
    assert (days["cumulative_reports"] == days.groupby("region")["reports"].cumsum()).all()
    again = run(people, settings)
    pd.testing.assert_frame_equal(days, again.region_days())
    pd.testing.assert_frame_equal(model.decisions(), again.decisions())
    other = run(people, settings, seed=8).region_days()
    assert not other["new_infections"].equals(days["new_infections"])


def test_every_agent_symptomatic_on_day_zero_reports_at_its_cells_bank_share():
    people = population(30_000, household=1)
    settings = EpidemicSettings(days=1, r0=0.0, symptomatic_share=1.0, initial_infected=len(people))
    model = run(people, settings)
    decisions = model.decisions()
    assert len(decisions) == len(people) and (decisions["day"] == 0).all()
    by_cell = decisions.groupby("cell_id").agg(n=("reported", "size"), reports=("reported", "sum"),
                                               expected=("p_yes", "sum"))
    for cell, row in by_cell.iterrows():
        p = P_YES[cell][0]                               # case level 0: nothing reported before day 0
        assert abs(row["expected"] / row["n"] - p) < 1e-12
        assert abs(row["reports"] / row["n"] - p) < 4 * np.sqrt(p * (1 - p) / row["n"])
    day0 = model.region_days().query("day == 0")
    assert np.allclose(day0["expected_reports"].sum(), decisions["p_yes"].sum())
    assert model.region_days().query("day == 1")["new_infections"].sum() == 0     # r0 = 0: no transmission


def test_household_members_decide_given_the_first_decision():
    people = population(6_000, household=4)
    settings = EpidemicSettings(days=1, r0=0.0, symptomatic_share=1.0, initial_infected=len(people))
    decisions = run(people, settings, chained=True).decisions()
    first = decisions[decisions["household_level"] == "none"]
    assert first["household"].is_unique and set(first["household"]) == set(people["household_id"])
    later = decisions[decisions["household_level"] != "none"].merge(
        first[["household", "reported"]].rename(columns={"reported": "first_reported"}), on="household")
    expected_level = np.where(later["first_reported"], "member_reported", "member_did_not_report")
    assert (later["household_level"] == expected_level).all()
    assert np.allclose(later["p_yes"], np.where(later["first_reported"], 0.9, 0.1))


def test_first_generation_matches_r0():
    """With one infectious day and a one-day latent period, day 1's infections are the first generation of
    the initial cases: r0 per case, less a little depletion (within four standard errors of a Poisson count).
    Reporting agents keep their contacts here (r0 counts infections without reporting)."""
    people = population(200_000, household=2)
    settings = EpidemicSettings(days=1, r0=1.5, household_transmission_share=0.3, infectious_days=1.0,
                                latent_days=1.0, initial_infected=2_000, quarantine_contact_factor=1.0)
    model = run(people, settings)
    infected = int(model.region_days().query("day == 1")["new_infections"].sum())
    expected = 1.5 * 2_000
    assert abs(infected - expected) < 4 * np.sqrt(expected), infected
    rates = transmission_rates(settings, np.full(10, 2))
    assert abs(rates.household_r0(settings, 1.0) - 0.45) < 1e-9


def test_bad_population_bank_and_settings_fail_with_one_line():
    people = population(100)
    with pytest.raises(InputError, match="no row for cell c_mid at case level '10-100'"):
        ReportingBank.from_table(bank_table().drop(index=6), CELLS)
    with pytest.raises(InputError, match="cell c_other has no row"):
        EpidemicModel(people.assign(cell_id="c_other"), ReportingBank.from_table(bank_table(), CELLS),
                      EpidemicSettings(), seed=1)
    with pytest.raises(InputError, match="p_yes"):
        ReportingBank.from_table(bank_table().assign(p_yes=1.5), CELLS)
    with pytest.raises(InputError, match="household contacts"):
        EpidemicModel(people.drop(columns="household_id"), ReportingBank.from_table(bank_table(), CELLS),
                      EpidemicSettings(), seed=1)
    with pytest.raises(InputError, match="epidemic: latent_days"):
        EpidemicSettings(latent_days=0.5)
