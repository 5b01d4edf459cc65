"""The personal attributes a reader may infer from a persona's writing, and their true values.

These are the attributes of SynthPAI's attribute-inference task (Yukhymenko et al. 2024, "A Synthetic
Dataset for Personal Attribute Inference"), restricted to what a pvsst persona carries: age, sex,
location (U.S. state), education, income band and, where a persona table has the column, relationship
status. Each attribute reads one persona column and maps its value to a *label*, the text a judge is
offered and scored on; a persona without the column, or with an empty value, has no true value for it
and is not asked about it.

Age is a number, scored as correct when a guess lies within :data:`AGE_TOLERANCE_YEARS` years of the true
age (SynthPAI likewise scores age within a band); the others are categorical, scored by exact label.

Examples
--------
>>> persona = {"age": 34, "sex": "female", "state_name": "Ohio", "education": "bachelors_degree",
...            "income_band": "$50,000-$99,999"}
>>> [(a.name, true_label(a, persona)) for a in attributes_of(persona)]  # doctest: +NORMALIZE_WHITESPACE
[('age', '34'), ('sex', 'female'), ('location', 'Ohio'), ('education', "bachelor's degree"),
 ('income', '$50,000-$99,999')]
>>> age_correct(40, 34), age_correct(39, 34, tolerance=5)
(False, True)
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pvsst.personas.geography import STATE_NAME
from pvsst.personas.vocabulary import EDUCATION_LEVELS, INCOME_BANDS, SEXES

AGE_TOLERANCE_YEARS = 5
"""A guessed age is correct when ``|guess - true age| <= AGE_TOLERANCE_YEARS``."""
AGE_RANGE = (18, 90)
"""The ages a judge may guess and the random baseline draws from (adults; the top age band is 85+)."""

EDUCATION_LABELS: dict[str, str] = dict(zip(EDUCATION_LEVELS, (
    "no high-school diploma", "high-school diploma", "some college, no degree", "associate degree",
    "bachelor's degree", "graduate or professional degree")))
RELATIONSHIP_STATUSES: tuple[str, ...] = ("single", "in a relationship", "married", "divorced", "widowed")


@dataclass(frozen=True)
class InferableAttribute:
    """One attribute: its name, the persona column it reads, and its labels.

    ``kind`` is ``"age"`` (a whole number of years) or ``"categorical"`` (one of ``labels``);
    ``label_of`` maps a persona value to its label (values that are already labels map to themselves).
    """

    name: str
    column: str
    kind: str
    labels: tuple[str, ...] = ()
    label_of: Mapping[str, str] = field(default_factory=dict)
    question: str = ""


INFERABLE_ATTRIBUTES: tuple[InferableAttribute, ...] = (
    InferableAttribute("age", "age", "age", question="age in whole years"),
    InferableAttribute("sex", "sex", "categorical", SEXES, question="sex"),
    InferableAttribute("location", "state_name", "categorical", tuple(sorted(STATE_NAME.values())),
                       question="U.S. state of residence"),
    InferableAttribute("education", "education", "categorical", tuple(EDUCATION_LABELS.values()),
                       EDUCATION_LABELS, question="highest education"),
    InferableAttribute("income", "income_band", "categorical", INCOME_BANDS, question="personal yearly income"),
    InferableAttribute("relationship_status", "relationship_status", "categorical", RELATIONSHIP_STATUSES,
                       question="relationship status"),
)
"""Every attribute, in the order prompts and tables list them."""
ATTRIBUTE_NAMES: tuple[str, ...] = tuple(a.name for a in INFERABLE_ATTRIBUTES)


def get_attribute(name: str) -> InferableAttribute:
    """The attribute called ``name`` (``KeyError`` for an unknown one).

    >>> get_attribute("income").column
    'income_band'
    """
    for attribute in INFERABLE_ATTRIBUTES:
        if attribute.name == name:
            return attribute
    raise KeyError(name)


def _present(value: object) -> bool:
    if value is None:
        return False
    try:
        return not (value != value)  # NaN and pandas' NA are not equal to themselves
    except TypeError:  # pandas.NA refuses a truth value
        return False


def true_label(attribute: InferableAttribute, persona: Mapping[str, object]) -> str | None:
    """The persona's true label of ``attribute`` (age as whole years), or ``None`` where it has none.

    A categorical value that is neither a label nor a known code is ``None`` too: it cannot be scored.

    >>> true_label(get_attribute("location"), {"state_name": "Texas"}), true_label(get_attribute("sex"), {})
    ('Texas', None)
    """
    value = persona.get(attribute.column)
    if not _present(value):
        return None
    if attribute.kind == "age":
        return str(int(value))
    text = str(value)
    label = attribute.label_of.get(text, text)
    return label if label in attribute.labels else None


def attributes_of(persona: Mapping[str, object]) -> list[InferableAttribute]:
    """The attributes ``persona`` has a true value for, in :data:`INFERABLE_ATTRIBUTES` order."""
    return [a for a in INFERABLE_ATTRIBUTES if true_label(a, persona) is not None]


def age_correct(guess: object, truth: object, tolerance: int = AGE_TOLERANCE_YEARS) -> bool:
    """Whether a guessed age lies within ``tolerance`` years of the true age (non-numbers are wrong).

    >>> age_correct("41", "38"), age_correct("forty", "38")
    (True, False)
    """
    try:
        return abs(int(str(guess)) - int(str(truth))) <= tolerance
    except ValueError:
        return False
