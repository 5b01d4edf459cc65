"""The ``audit`` section of a survey instrument or a study spec: a counterfactual persona audit.

In a survey instrument the personas asked become matched sets: ``matched_sets`` base personas (of the
persona source's ``personas.n``), each copied once per combination of the levels of the varied
attribute(s) (``vary``), every other attribute and the request seed equal, so a difference within a
set can only come from the varied attributes. With ``arity_null: true`` (the default) each base persona
is also asked as many times as there are groups with nothing changed but the request seed: the
arity-matched null, the noise floor a disparity over that many groups must exceed. ``pvsst survey
score`` computes the audit (:mod:`pvsst.analysis.survey.audit`).

In a study spec the same matched sets write the trial's first-round post and vote on one shared ballot
of first-round posts (:mod:`pvsst.sim.first_round_audit`), once per model x topic; ``pvsst analyze``
audits their reported stances and net votes (:mod:`pvsst.analysis.study.audit`).

``vary`` is either a list of attributes (each takes every level of its persona vocabulary) or a
mapping of attribute -> the levels to compare. Only categorical persona attributes with a fixed
vocabulary can be varied (:data:`AUDIT_VOCABULARY`).

Examples
--------
>>> audit = AuditSpec.model_validate({"vary": {"race_ethnicity": ["black", "white"], "sex": ["female", "male"]},
...                                   "matched_sets": 50})
>>> audit.n_groups, audit.alpha, audit.fdr
(4, 0.05, 'benjamini_hochberg')
>>> AuditSpec.model_validate({"vary": ["sex"], "matched_sets": 2}).vary
{'sex': ['male', 'female']}
"""
from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, field_validator

from pvsst.core.bounds import MAX_MATCHED_SETS, MAX_PERMUTATIONS
from pvsst.experiments.spec.base import SpecFieldError, StrictModel
from pvsst.personas.respondents import GSS_IDEOLOGIES, VOCABULARY
from pvsst.personas.survey_attributes import IDEOLOGIES_CCES, IDEOLOGY_NOT_SURE, RELIGIOSITIES

# The persona attributes an audit may vary, with the levels each may take (the persona vocabulary).
AUDIT_VOCABULARY: dict[str, tuple[str, ...]] = {
    **VOCABULARY,
    "ideology": tuple(dict.fromkeys(GSS_IDEOLOGIES + IDEOLOGIES_CCES + (IDEOLOGY_NOT_SURE,))),
    "religiosity": RELIGIOSITIES,
}
# Attributes derived from another: varying the source needs them rewritten, and they are not varied alone.
DERIVED_ATTRIBUTES = {"party": "party_id", "age_band": "age", "income_band": "income", "state_name": "state",
                      "region": "state"}


class AuditSpec(StrictModel):
    """What a counterfactual persona audit varies, over how many matched sets, and how it is tested."""

    vary: dict[str, list[str]]
    matched_sets: int = Field(ge=2, le=MAX_MATCHED_SETS)
    arity_null: bool = True
    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    fdr: Literal["benjamini_hochberg"] = "benjamini_hochberg"
    permutations: int = Field(default=2000, ge=99, le=MAX_PERMUTATIONS)

    @field_validator("vary", mode="before")
    @classmethod
    def _levels(cls, value):
        if isinstance(value, list):  # a list of attributes: every level of each one's vocabulary
            for attribute in value:
                cls._known(attribute)
            value = {attribute: list(AUDIT_VOCABULARY[attribute]) for attribute in value}
        if not isinstance(value, dict):
            return value
        if not value:
            raise SpecFieldError("", "name at least one persona attribute to vary")
        for attribute, levels in value.items():
            cls._known(attribute)
            if not isinstance(levels, list):
                continue  # pydantic reports the type
            unknown = [str(level) for level in levels if str(level) not in AUDIT_VOCABULARY[attribute]]
            if unknown:
                raise SpecFieldError(attribute, f"level {unknown[0]!r} is not in the persona vocabulary of "
                                     f"{attribute} ({', '.join(AUDIT_VOCABULARY[attribute])})")
            if len(set(map(str, levels))) < 2 or len(set(map(str, levels))) != len(levels):
                raise SpecFieldError(attribute, f"needs at least 2 distinct levels, each named once (got {levels})")
        return value

    @staticmethod
    def _known(attribute) -> None:
        if attribute in AUDIT_VOCABULARY:
            return
        if attribute in DERIVED_ATTRIBUTES:
            raise SpecFieldError(str(attribute), f"{attribute} is derived from {DERIVED_ATTRIBUTES[attribute]}: "
                                 f"vary {DERIVED_ATTRIBUTES[attribute]} (which the persona card shows)")
        raise SpecFieldError(str(attribute), f"not a persona attribute with a vocabulary (attributes that can be "
                             f"varied: {', '.join(AUDIT_VOCABULARY)})")

    @property
    def n_groups(self) -> int:
        """The number of level combinations (groups) of a matched set."""
        return math.prod(len(levels) for levels in self.vary.values())
