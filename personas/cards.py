"""Persona cards: render a persona row to text with versioned template files.

Templates live in ``personas/templates/STYLE_vN.txt`` (``string.Template`` syntax). Each style
declares the fields it uses (:data:`STYLE_FIELDS`); :func:`check_template` fails when a template uses
a field that is not declared (missing) or leaves a declared field out (unused), so a template and
its context cannot drift apart silently. Styles: ``profile`` (third person, the PSII persona-prompt
style), ``backstory`` (first person), ``label`` (PV-SST's short label; the posting style is a
separate column) and ``demographic`` (PSII's demographic-prompt baseline: "You are a woman. You are
aged 45. ..."). A style name without a version uses the latest version.

Attributes a persona lacks (e.g. state or religiosity of a GSS respondent) render as neutral
phrases ("the United States", "an unrecorded income") or are left out.

Example
-------
>>> from pvsst.personas.synthesis import synthesize
>>> table = personas_for_simulation(synthesize(3, seed=1).personas)
>>> list(table.columns[-3:])
['card', 'label', 'posting_style']
>>> table["label"].str.fullmatch(r"[a-z-]+ (man|woman) from .+, \\d+").all()
np.True_
"""
from __future__ import annotations

import re
import string
from functools import lru_cache
from importlib import resources

import pandas as pd

from pvsst.core.errors import InputError
from pvsst.personas.survey_attributes import posting_style_of
from pvsst.personas.vocabulary import COLLEGE_DEGREE_LEVELS

_COMMON = ("race_phrase", "sex_noun", "place", "education_phrase", "income_phrase",
           "party_phrase")
STYLE_FIELDS: dict[str, frozenset[str]] = {
    "profile": frozenset(_COMMON + ("age_phrase_cap", "subject", "subject_cap", "ideology_third", "religion_third")),
    "backstory": frozenset(_COMMON + ("age_phrase", "ideology_first", "religion_first")),
    "label": frozenset(("education_descriptor", "sex_noun", "place_short", "age")),
    "demographic": frozenset(("sex_noun", "age", "education_phrase", "place")),
}
_TEMPLATE_FILE = {"profile": "profile", "backstory": "backstory", "label": "pvsst_label", "demographic": "demographic"}

_RACE = {"hispanic": "Hispanic", "white": "white", "black": "Black", "asian": "Asian",
         "other": "multiracial or other-race"}
_EDUCATION = {"less_than_high_school": "no high-school diploma",
              "high_school_graduate": "a high-school diploma",
              "some_college_no_degree": "some college but no degree",
              "associate_degree": "an associate degree", "bachelors_degree": "a bachelor's degree",
              "advanced_degree": "a graduate or professional degree"}
_EDUCATION_DESCRIPTOR = {"less_than_high_school": "no-diploma",
                         "high_school_graduate": "high-school-educated",
                         "some_college_no_degree": "some-college",
                         "associate_degree": "associate-degree",
                         "bachelors_degree": "college-educated",
                         "advanced_degree": "graduate-educated"}
_PARTY = {"Strong Democrat": "a strong Democrat", "Not very strong Democrat": "a Democrat, though not a strong one",
          "Lean Democrat": "an independent who leans Democratic", "Independent": "an independent",
          "Lean Republican": "an independent who leans Republican",
          "Not very strong Republican": "a Republican, though not a strong one",
          "Strong Republican": "a strong Republican"}


def available_styles() -> list[str]:
    """Every ``STYLE_vN`` with a template file, plus the bare style names.

    Examples
    --------
    >>> [s for s in available_styles() if s.startswith("profile")]
    ['profile', 'profile_v1']
    """
    names = {p.name for p in resources.files("pvsst.personas").joinpath("templates").iterdir()}
    out = []
    for style, stem in _TEMPLATE_FILE.items():
        versions = sorted(int(m.group(1)) for n in names if (m := re.fullmatch(rf"{stem}_v(\d+)\.txt", n)))
        if versions:
            out.append(style)
            out += [f"{style}_v{v}" for v in versions]
    return out


def _resolve(style: str) -> tuple[str, str]:
    """(style, template file name) of a style name such as ``profile`` or ``profile_v1``."""
    match = re.fullmatch(r"([a-z]+)(?:_v(\d+))?", str(style))
    if not match or match.group(1) not in _TEMPLATE_FILE or style not in available_styles():
        raise InputError("cards", "style", f"unknown card style {style!r}; available: {', '.join(available_styles())}")
    base, version = match.group(1), match.group(2)
    if version is None:
        version = max(int(s.rsplit("_v", 1)[1]) for s in available_styles() if s.startswith(f"{base}_v"))
    return base, f"{_TEMPLATE_FILE[base]}_v{version}.txt"


def check_template(template: string.Template, style: str, fields: frozenset[str] | None = None) -> None:
    """Raise :class:`InputError` if ``template`` uses undeclared fields or leaves declared ones unused.

    The declared fields are ``STYLE_FIELDS[style]`` unless ``fields`` names them (templates of other
    card families, such as the cell cards of :mod:`pvsst.personas.cell_cards`).

    Example
    -------
    >>> check_template(string.Template("${age} ${nickname}"), "label")
    Traceback (most recent call last):
    ...
    pvsst.core.errors.InputError: template label: fields: missing (not provided): nickname; unused: ...
    """
    if not template.is_valid():
        raise InputError(f"template {style}", "syntax", "invalid $-placeholder")
    used = set(template.get_identifiers())
    declared = STYLE_FIELDS[style] if fields is None else fields
    problems = []
    if used - declared:
        problems.append("missing (not provided): " + ", ".join(sorted(used - declared)))
    if declared - used:
        problems.append("unused: " + ", ".join(sorted(declared - used)))
    if problems:
        raise InputError(f"template {style}", "fields", "; ".join(problems))


@lru_cache(maxsize=None)
def load_template(style: str) -> tuple[str, string.Template]:
    """The checked template of a style; returns (base style, template)."""
    base, filename = _resolve(style)
    text = resources.files("pvsst.personas").joinpath("templates", filename).read_text(encoding="utf-8").strip()
    template = string.Template(text)
    check_template(template, base)
    return base, template


def _value(row, key):
    value = row.get(key)
    return None if value is None or (not isinstance(value, str) and pd.isna(value)) else value


def _age_phrase(age) -> str:
    """'a 41-year-old' / 'an 80-year-old' / 'an adult' (age unknown)."""
    if age is None:
        return "an adult"
    spoken_vowel = str(int(age)).startswith("8") or int(age) in (11, 18)
    return f"{'an' if spoken_vowel else 'a'} {int(age)}-year-old"


def card_context(row: dict) -> dict[str, str]:
    """Every card field of one persona (a dict or Series of its attributes)."""
    female = _value(row, "sex") == "female"
    subject, obj = ("she", "her") if female else ("he", "him")
    state_name, state = _value(row, "state_name"), _value(row, "state")
    place = state_name or state or "the United States"
    income = _value(row, "income")
    if income is None:
        income_phrase = "an unrecorded income"
    elif int(income) <= 0:
        income_phrase = "no personal income"
    else:
        income_phrase = f"a personal income of about ${int(round(int(income), -2)):,} a year"
    party = _value(row, "party_id")
    ideology = _value(row, "ideology")
    if ideology is None or ideology == "not sure":
        ideology_third = f"is not sure where {subject} stands between liberal and conservative"
        ideology_first = "am not sure where I stand between liberal and conservative"
    else:
        ideology_third = f"describes {'herself' if female else 'himself'} as {ideology}"
        ideology_first = f"would describe myself as {ideology}"
    religiosity = _value(row, "religiosity")
    education = _value(row, "education")
    age = _value(row, "age")
    return {
        "age": str(int(age)) if age is not None else "adult",
        "age_phrase": _age_phrase(age), "age_phrase_cap": _age_phrase(age).capitalize(),
        "race_phrase": _RACE.get(_value(row, "race_ethnicity"), ""),
        "sex_noun": "woman" if female else "man",
        "subject": subject, "subject_cap": subject.capitalize(),
        "place": place, "place_short": place,
        "education_phrase": _EDUCATION.get(education, "an unrecorded level of education"),
        "education_descriptor": _EDUCATION_DESCRIPTOR.get(education, "adult"),
        "income_phrase": income_phrase,
        "party_phrase": _PARTY.get(party, "a supporter of another party or undecided"),
        "ideology_third": ideology_third, "ideology_first": ideology_first,
        "religion_third": f"Religion is {religiosity} to {obj}." if religiosity else "",
        "religion_first": f"Religion is {religiosity} to me." if religiosity else "",
    }


def render_card(row: dict, style: str = "profile") -> str:
    """Render one persona as a card of ``style`` (see :func:`available_styles`).

    Example
    -------
    >>> render_card({"age": 67, "sex": "female", "state_name": "Ohio",
    ...              "education": "bachelors_degree"}, "label")
    'college-educated woman from Ohio, 67'
    """
    return _card_from_context(card_context(row), style)


def _card_from_context(context: dict[str, str], style: str) -> str:
    base, template = load_template(style)
    text = template.substitute({k: context[k] for k in STYLE_FIELDS[base]})
    return re.sub(r" {2,}", " ", re.sub(r" +([.,])", r"\1", text)).strip()


def personas_for_simulation(frame: pd.DataFrame, card_style: str = "profile") -> pd.DataFrame:
    """The persona table the simulation consumes: ``frame`` plus ``card``, ``label``, ``posting_style``.

    ``card`` is rendered in ``card_style``, ``label`` in the ``label`` style. An existing
    ``posting_style`` column is kept; otherwise it is derived by
    :func:`pvsst.personas.survey_attributes.posting_style_of` from party id, ideology and education.
    """
    load_template(card_style)
    out = frame.copy()
    contexts = [card_context(r) for r in frame.to_dict("records")]  # one per persona, for both cards
    out["card"] = [_card_from_context(c, card_style) for c in contexts]
    out["label"] = [_card_from_context(c, "label") for c in contexts]
    if "posting_style" in frame.columns:
        out = out.drop(columns="posting_style")
        out["posting_style"] = frame["posting_style"].astype(str).to_numpy()
    else:
        college = frame.get("education", pd.Series([None] * len(frame))).isin(COLLEGE_DEGREE_LEVELS)
        out["posting_style"] = posting_style_of(frame.get("party_id", [None] * len(frame)),
                                                frame.get("ideology", [None] * len(frame)),
                                                college.to_numpy())
    return out
