"""A census population ready for scenario experiments: households, household income, race and Hispanic origin.

:func:`scenario_population` takes census personas (:func:`pvsst.personas.synthesis.synthesize`) and adds
what a design of cells of age (under / over 50) x sex x race (Hispanic as a flag) x household income
x education, placed in households, needs:

- ``race``, ``hispanic_origin`` (:mod:`pvsst.personas.race_origin`: census projections);
- ``household_id``, ``household_size``, ``household_member`` (:mod:`pvsst.personas.households`: the
  study's size distribution, grouped within ``within``);
- ``household_income`` (the CCES 2016 category) and ``household_income_band``
  (:mod:`pvsst.personas.household_income`): drawn once per household from CCES respondents of the
  first member's demographic cell, shared by every member;
- ``age_group_50`` (:data:`pvsst.personas.vocabulary.AGE_GROUPS_50`) and ``education_group``
  (:data:`pvsst.personas.vocabulary.EDUCATION_GROUPS`), the design's coarse levels.

``provenance`` says where each added attribute comes from, for an instrument's header and a report.
The three draws (race, households, income) use independent streams of ``SeedSequence(seed)``.

Examples
--------
>>> from pvsst.personas.households import HouseholdSizes
>>> from pvsst.personas.synthesis import synthesize
>>> people = synthesize(300, geography="GA", seed=1).personas
>>> sizes = HouseholdSizes(shares=(0.4, 0.4, 0.2), source="a planted distribution")
>>> population = scenario_population(people, sizes, seed=2)
>>> int(population.personas.groupby("household_id")["household_income"].nunique().max())
1
>>> sorted(population.provenance)
['age_group_50', 'education_group', 'household_income', 'households', 'race_origin']
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pvsst.core.errors import InputError
from pvsst.personas.geography import REGIONS
from pvsst.personas.household_income import (
    INCOME_SOURCE,
    IncomeBands,
    draw_household_income,
    income_frame,
    load_household_income_model,
)
from pvsst.personas.households import HouseholdSizes, assign_households
from pvsst.personas.race_origin import RACE_ORIGIN_SOURCE, codes_of, race_and_origin
from pvsst.personas.survey_attributes import age_group_index
from pvsst.personas.vocabulary import (
    AGE_GROUPS_50,
    COLLEGE_DEGREE_LEVELS,
    EDUCATION_GROUP_OF,
    EDUCATION_GROUPS,
    RACE_ETHNICITIES,
    SEXES,
)

NEEDED_COLUMNS = ("persona_id", "age", "age_band", "sex", "race_ethnicity", "education", "region")
SCENARIO_ATTRIBUTES = ("age_group_50", "race", "hispanic_origin", "household_income_band", "education_group")
"""The categorical columns :func:`scenario_population` adds that an instrument's cells may be defined by."""


@dataclass(frozen=True)
class ScenarioPopulation:
    """The personas with the added columns (module docstring) and where each comes from."""

    personas: pd.DataFrame
    provenance: dict[str, str]


def _household_income(personas: pd.DataFrame, homes: pd.DataFrame, bands: IncomeBands,
                      rng: np.random.Generator) -> pd.DataFrame:
    first = np.flatnonzero(homes["household_member"].to_numpy() == 0)
    heads = personas.iloc[first]
    college = heads["education"].astype(object).isin(COLLEGE_DEGREE_LEVELS).to_numpy().astype(int)
    cells = load_household_income_model().cell_index(
        age_group_index(pd.to_numeric(heads["age"]).to_numpy()), codes_of(heads["sex"], SEXES, "sex"),
        codes_of(heads["race_ethnicity"], RACE_ETHNICITIES, "race_ethnicity"), college,
        codes_of(heads["region"], REGIONS, "region"))
    head_codes = pd.Series(draw_household_income(cells, rng), index=homes["household_id"].to_numpy()[first])
    codes = head_codes.reindex(homes["household_id"].to_numpy()).to_numpy()
    return income_frame(codes, bands).set_index(personas.index)


def scenario_population(personas: pd.DataFrame, household_sizes: HouseholdSizes, seed: int,
                        income_bands: IncomeBands = IncomeBands(), within: str = "state") -> ScenarioPopulation:
    """Add households, household income, race, Hispanic origin and the design's coarse levels.

    Parameters
    ----------
    personas
        Census personas with the columns :data:`NEEDED_COLUMNS` (and ``within``).
    household_sizes
        The household size distribution and its source.
    seed
        Master seed of the three draws.
    income_bands
        Household income bands (default: below / at or above $70,000).
    within
        The column whose values households do not cross (default ``state``).

    Raises
    ------
    InputError
        A missing column, a value outside the persona vocabulary, or a bad seed.
    """
    missing = [c for c in NEEDED_COLUMNS if c not in personas.columns]
    if missing:
        raise InputError("personas", missing[0], "needed for a scenario population")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError("scenario_population", "seed", f"must be a non-negative whole number, got {seed!r}")
    race_stream, household_stream, income_stream = (np.random.default_rng(s)
                                                    for s in np.random.SeedSequence(int(seed)).spawn(3))
    split = race_and_origin(personas, race_stream)
    homes = assign_households(personas, household_sizes, household_stream, within=within)
    income = _household_income(personas, homes, income_bands, income_stream)
    age = pd.to_numeric(personas["age"]).to_numpy()
    education = codes_of(personas["education"], tuple(EDUCATION_GROUP_OF), "education")
    group_of = np.array([EDUCATION_GROUPS.index(EDUCATION_GROUP_OF[level]) for level in EDUCATION_GROUP_OF])
    out = personas.copy()
    out["age_group_50"] = pd.Categorical.from_codes((age >= 50).astype(np.int32), categories=list(AGE_GROUPS_50))
    out["education_group"] = pd.Categorical.from_codes(group_of[education].astype(np.int32),
                                                       categories=list(EDUCATION_GROUPS))
    for frame in (split, homes, income):
        for column in frame.columns:
            out[column] = frame[column]
    provenance = {
        "race_origin": RACE_ORIGIN_SOURCE,
        "households": f"{household_sizes.source}; adults grouped at random within {within}",
        "household_income": f"{INCOME_SOURCE} of the household's first member; bands "
                            + ", ".join(income_bands.labels),
        "age_group_50": "the persona's age (census single-year ages)",
        "education_group": "the persona's education (CPS 2022 levels grouped)",
    }
    return ScenarioPopulation(personas=out, provenance=provenance)
