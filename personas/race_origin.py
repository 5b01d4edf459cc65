"""Race and Hispanic origin as two attributes: a race phrase (White, Black, Asian, other) and a Hispanic flag.

Census personas carry one ``race_ethnicity`` (Hispanic of any race, or a non-Hispanic race): the raked
population's categories. A design that names race and adds Hispanic origin as a flag (a White person
of Hispanic background) needs both. :func:`race_and_origin` splits them:

- a non-Hispanic persona keeps its race (``race_ethnicity`` white / black / asian / other);
- a Hispanic persona draws its race from P(race | Hispanic, age band, sex) of the 2023 National
  Population Projections (:attr:`pvsst.personas.census.CensusTables.race_given_hispanic_age_sex`; its
  approximation is stated in :mod:`pvsst.personas.census`), national shares applied everywhere.

The Hispanic share itself is the raked census population's (unchanged here).

Examples
--------
>>> import pandas as pd
>>> people = pd.DataFrame({"race_ethnicity": ["white", "hispanic", "asian"], "age_band": ["30-34"] * 3,
...                        "sex": ["female", "male", "female"]})
>>> split = race_and_origin(people, np.random.default_rng(0))
>>> split["hispanic_origin"].tolist(), split["race"].tolist()[0::2]
(['not Hispanic', 'Hispanic', 'not Hispanic'], ['white', 'asian'])
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.core.errors import InputError
from pvsst.personas.census import SOURCE_HISPANIC_RACE, load_census_tables
from pvsst.personas.vocabulary import AGE_BANDS, RACE_ETHNICITIES, RACES, SEXES

HISPANIC_ORIGINS: tuple[str, ...] = ("not Hispanic", "Hispanic")
RACE_ORIGIN_SOURCE = ("Hispanic origin: the raked census population's; race of Hispanic adults: "
                      + SOURCE_HISPANIC_RACE)


def codes_of(column: pd.Series, levels, name: str, source: str = "personas") -> np.ndarray:
    """Integer codes of a column's values in ``levels`` (categorical or plain), or :class:`InputError`
    naming the first value outside them.

    Examples
    --------
    >>> codes_of(pd.Series(["male", "female"]), SEXES, "sex").tolist()
    [0, 1]
    """
    values = column.astype(object).to_numpy()
    lookup = {level: i for i, level in enumerate(levels)}
    codes = np.fromiter((lookup.get(v, -1) for v in values), dtype=np.int64, count=len(values))
    if (codes < 0).any():
        bad = values[int(np.argmax(codes < 0))]
        raise InputError(source, name, f"value {bad!r} is not one of {', '.join(map(str, levels))}")
    return codes


def race_and_origin(personas: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """``race`` (:data:`RACES`) and ``hispanic_origin`` (:data:`HISPANIC_ORIGINS`) of every persona,
    as categorical columns aligned with ``personas`` (see the module docstring).

    Needs ``race_ethnicity``, ``age_band`` and ``sex``; a missing column or value is an :class:`InputError`.
    """
    for column in ("race_ethnicity", "age_band", "sex"):
        if column not in personas.columns:
            raise InputError("personas", column, "needed to split race and Hispanic origin")
    race_eth = codes_of(personas["race_ethnicity"], RACE_ETHNICITIES, "race_ethnicity")
    hispanic = race_eth == RACE_ETHNICITIES.index("hispanic")
    race = np.array([RACES.index(r) if r in RACES else -1 for r in RACE_ETHNICITIES])[race_eth]
    rows = np.flatnonzero(hispanic)
    if rows.size:
        band = codes_of(personas["age_band"].iloc[rows], AGE_BANDS, "age_band")
        sex = codes_of(personas["sex"].iloc[rows], SEXES, "sex")
        cdf = np.cumsum(load_census_tables().race_given_hispanic_age_sex, axis=0)[:, band, sex]   # (4, n)
        race[rows] = (rng.random(rows.size)[None, :] >= cdf[:-1]).sum(axis=0)
    return pd.DataFrame({"race": pd.Categorical.from_codes(race.astype(np.int32), categories=list(RACES)),
                         "hispanic_origin": pd.Categorical.from_codes(hispanic.astype(np.int32),
                                                                      categories=list(HISPANIC_ORIGINS))},
                        index=personas.index)
