"""The ``cells`` section of a survey instrument: the persona attributes that define a cell, its card, its draws.

With ``cells`` set, the personas asked are the population's cells (:mod:`pvsst.personas.cells`): one
prompt per cell, printed by a cell card (:mod:`pvsst.personas.cell_cards`) that shows only the cell
attributes, so every member of a cell would receive the identical request and the cell's answer is
each member's. ``k`` is the number of sampled answers per cell x question under ``sample`` elicitation
(``logprobs`` and ``verbalized`` make one call per cell x question).

:func:`check_cells` is the instrument's static check (run when the instrument is read): every cell
attribute is a categorical persona attribute (:data:`CELL_ATTRIBUTES`), the population carries it (a
respondent-matched population only has what ``personas.attributes`` maps), the card template exists,
draws per cell come from ``cells.k`` alone, and every grouping axis reads a cell attribute (a cell
belongs to one group).

Examples
--------
>>> CellsSpec(attributes=["sex", "party"]).k
1
>>> respondent_source("region")
'state'
"""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

from pvsst.core.errors import InputError
from pvsst.core.validation import SpecFieldError, first_duplicate
from pvsst.experiments.spec.base import StrictModel
from pvsst.personas.cell_cards import load_cell_template
from pvsst.personas.scenario_population import SCENARIO_ATTRIBUTES

# Categorical persona attributes a cell may be defined by (the persona vocabulary, pvsst.personas.vocabulary).
# Census personas get the scenario attributes (age_group_50, race, hispanic_origin, household_income_band,
# education_group) when a cell asks for one (pvsst.personas.scenario_population).
CELL_ATTRIBUTES = ("age_band", "sex", "race_ethnicity", "education", "college", "state", "region",
                   "income_band", "party_id", "party", "ideology", "religiosity", *SCENARIO_ATTRIBUTES)
# The persona attribute a respondent-matched persona's cell attribute is derived from (the rest: itself).
_RESPONDENT_SOURCE = {"age_band": "age", "region": "state", "income_band": "income", "party": "party_id",
                      "college": "education"}


class CellsSpec(StrictModel):
    """Answer the population cell by cell (see the module docstring)."""

    attributes: list[str] = Field(min_length=1)
    card_style: Annotated[str, Field(pattern=r"^cell_v[0-9]+$")] = "cell_v1"
    k: int = Field(default=1, ge=1, le=10_000)

    @property
    def card_version(self) -> int:
        return int(self.card_style.removeprefix("cell_v"))


def respondent_source(attribute: str) -> str:
    """The ``personas.attributes`` entry a respondent-matched persona reads ``attribute`` from."""
    return _RESPONDENT_SOURCE.get(attribute, attribute)


def check_cells(cells: CellsSpec, persona_source: str, mapped: set[str], grouping_columns: list[str],
                samples_per_persona: int) -> None:
    """Raise :class:`SpecFieldError` (field relative to the instrument) for the first problem found.

    Examples
    --------
    >>> check_cells(CellsSpec(attributes=["sex", "partyy"]), "census", set(), [],
    ...             1)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    pvsst.core.validation.SpecFieldError: unknown cell attribute 'partyy' (persona attributes: age_band, sex,
    race_ethnicity, education, college, state, region, income_band, party_id, party, ideology, religiosity,
    age_group_50, race, hispanic_origin, household_income_band, education_group)
    >>> check_cells(CellsSpec(attributes=["sex", "party"]), "respondents", {"sex"}, [],
    ...             1)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    pvsst.core.validation.SpecFieldError: the population (respondent-matched personas) lacks cell attribute 'party':
    map party_id in personas.attributes
    """
    for i, attribute in enumerate(cells.attributes):
        if attribute not in CELL_ATTRIBUTES:
            raise SpecFieldError(f"cells.attributes[{i}]", f"unknown cell attribute {attribute!r} (persona "
                                 f"attributes: {', '.join(CELL_ATTRIBUTES)})")
        if persona_source == "respondents" and respondent_source(attribute) not in mapped:
            raise SpecFieldError(f"cells.attributes[{i}]", "the population (respondent-matched personas) lacks "
                                 f"cell attribute {attribute!r}: map {respondent_source(attribute)} in "
                                 "personas.attributes")
    if (dup := first_duplicate(cells.attributes)) is not None:
        raise SpecFieldError(f"cells.attributes[{dup[0]}]", f"duplicate {dup[1]!r}")
    try:
        load_cell_template(cells.card_version)
    except InputError as err:
        raise SpecFieldError("cells.card_style", err.problem) from None
    if samples_per_persona != 1:
        raise SpecFieldError("sampling.samples_per_persona", "a cell run draws cells.k answers per cell x "
                             "question: leave samples_per_persona at 1")
    for i, column in enumerate(grouping_columns):
        if column not in cells.attributes:
            raise SpecFieldError(f"grouping[{i}].persona_column", f"{column!r} is not a cell attribute; in a "
                                 f"cell run a group is read from the cell ({', '.join(cells.attributes)})")
