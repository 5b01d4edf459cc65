"""The attribute vocabulary shared by synthetic and respondent-matched personas.

Every categorical persona attribute takes one of the values listed here, in this order (the order is
the axis order of the raked joint table).

Example
-------
>>> AGE_BANDS[0], AGE_BANDS[-1]
('18-19', '85+')
>>> age_band_of([18, 44, 90])
['18-19', '40-44', '85+']
"""
from __future__ import annotations

import numpy as np

# Adult age bands: ACS S0101 five-year bands with 18-19 split off the 15-19 band.
AGE_BANDS: tuple[str, ...] = ("18-19", "20-24", "25-29", "30-34", "35-39", "40-44", "45-49",
                              "50-54", "55-59", "60-64", "65-69", "70-74", "75-79", "80-84", "85+")
AGE_BAND_LOWER: tuple[int, ...] = (18, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85)
FIRST_25_PLUS_BAND = AGE_BANDS.index("25-29")

SEXES: tuple[str, ...] = ("male", "female")

# Hispanic (any race) and non-Hispanic groups; "other" = American Indian / Alaska Native,
# Native Hawaiian / Pacific Islander and two or more races (non-Hispanic).
RACE_ETHNICITIES: tuple[str, ...] = ("hispanic", "white", "black", "asian", "other")
# Race alone, whatever the Hispanic origin (the race phrase beside a Hispanic flag); "other" as above.
RACES: tuple[str, ...] = ("white", "black", "asian", "other")

# Levels of CPS 2022 educational attainment (file education_25plus_cps2022.csv).
EDUCATION_LEVELS: tuple[str, ...] = ("less_than_high_school", "high_school_graduate",
                                     "some_college_no_degree", "associate_degree",
                                     "bachelors_degree", "advanced_degree")
COLLEGE_DEGREE_LEVELS: frozenset[str] = frozenset({"bachelors_degree", "advanced_degree"})
# The college-degree flag (bachelor's or more vs not), the education a survey with a degree flag only
# shares with the census: the persona attribute ``college``, derived from ``education``.
COLLEGE_FLAGS: tuple[str, ...] = ("college degree", "no college degree")
# Three education groups of scenario designs, and the group of each level.
EDUCATION_GROUPS: tuple[str, ...] = ("high school or less", "some college", "bachelor's or more")
EDUCATION_GROUP_OF: dict[str, str] = {
    "less_than_high_school": "high school or less", "high_school_graduate": "high school or less",
    "some_college_no_degree": "some college", "associate_degree": "some college",
    "bachelors_degree": "bachelor's or more", "advanced_degree": "bachelor's or more"}
# Two age groups of scenario designs (age under 50, 50 and over).
AGE_GROUPS_50: tuple[str, ...] = ("under 50", "50 or older")

# Personal annual income bands (2012 dollars, from the ACS 2012 seed); upper bounds exclusive.
INCOME_BANDS: tuple[str, ...] = ("no income", "under $25,000", "$25,000-$49,999",
                                 "$50,000-$99,999", "$100,000 or more")
INCOME_BAND_EDGES: tuple[float, ...] = (0.0, 1.0, 25_000.0, 50_000.0, 100_000.0)

# Party identification, the 7-point scale (CCES pid7 / GSS partyid wording), and its 3-way summary.
PARTY_IDS: tuple[str, ...] = ("Strong Democrat", "Not very strong Democrat", "Lean Democrat",
                              "Independent", "Lean Republican", "Not very strong Republican",
                              "Strong Republican")
PARTY_ID_OTHER = "Other or not sure"
PARTIES: tuple[str, ...] = ("Democrat", "Independent", "Republican", "Other")


def age_band_of(ages) -> list[str]:
    """Map ages in years (18 or older) to :data:`AGE_BANDS` labels.

    Example
    -------
    >>> age_band_of([19, 20, 85])
    ['18-19', '20-24', '85+']
    """
    idx = age_band_index(np.asarray(ages))
    return [AGE_BANDS[i] for i in idx]


def age_band_index(ages: np.ndarray) -> np.ndarray:
    """Index into :data:`AGE_BANDS` of each age (ages below 18 map to band 0; filter them first)."""
    return np.clip(np.searchsorted(AGE_BAND_LOWER, ages, side="right") - 1, 0, len(AGE_BANDS) - 1)


def party_of(party_id: str) -> str:
    """Three-way party (leaners counted with their party) of a 7-point party id label.

    Example
    -------
    >>> party_of("Lean Republican"), party_of("Independent")
    ('Republican', 'Independent')
    """
    if party_id in PARTY_IDS[:3]:
        return "Democrat"
    if party_id in PARTY_IDS[4:]:
        return "Republican"
    return "Independent" if party_id == "Independent" else "Other"


def college_of(education) -> list[str | None]:
    """The college-degree flag (:data:`COLLEGE_FLAGS`) of education levels; None where education is missing.

    Example
    -------
    >>> college_of(["bachelors_degree", "some_college_no_degree", None])
    ['college degree', 'no college degree', None]
    """
    return [None if e is None or e != e else COLLEGE_FLAGS[0] if e in COLLEGE_DEGREE_LEVELS else COLLEGE_FLAGS[1]
            for e in education]
