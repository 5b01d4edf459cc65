"""The survey analysis plan: the one definition of an instrument's ``analysis`` section, and what it means.

A survey instrument's ``analysis`` section *is* :class:`SurveyAnalysisPlan`
(``pvsst.experiments.survey.spec`` imports it), as a study spec's is
:class:`pvsst.analysis.stats.plan.AnalysisPlan`. ``pvsst survey run`` writes the parsed section into
``RUN/scoring.json`` (``settings``), and the scoring parses it back with the same strict model
(:func:`plan_from_settings`): an unknown key or a value out of bounds is an error naming the file and the
field. Every interval of the scoring, the cell estimates, the audit and the consistency takes its draws,
seed and level from the one parsed plan.

Examples
--------
>>> plan = SurveyAnalysisPlan(bootstrap_draws=200)
>>> plan.bootstrap_draws, plan.bootstrap_seed, plan.ci_level, plan.parse_failure_threshold
(200, 20260729, 0.95, 0.05)
>>> plan_from_settings({"bootstrap_draws": 50}).with_draws(20).bootstrap_draws
20
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, ValidationError

from pvsst.analysis.survey.fidelity import DEFAULT_SMOOTHING
from pvsst.core.bounds import MAX_BOOTSTRAP_DRAWS, MAX_PERSONAS, MAX_SEED
from pvsst.core.defaults import ANALYSIS_SEED, FAILURE_THRESHOLD, SURVEY_BOOTSTRAP_DRAWS
from pvsst.core.errors import InputError
from pvsst.core.run_layout import SCORING
from pvsst.core.validation import StrictModel, describe_validation_error, join_field

MIN_BOOTSTRAP_DRAWS = 10
"""The fewest bootstrap draws an interval is computed from (``analysis.bootstrap_draws``, ``--draws``)."""


class SurveyAnalysisPlan(StrictModel):
    """How a survey run's answers are scored against the real ones: smoothing, bootstrap, groups, failures.

    ``smoothing`` is the additive smoothing of both distributions before a KL divergence;
    ``bootstrap_draws`` and ``bootstrap_seed`` drive every percentile interval, at level ``ci_level``;
    groups with fewer than ``min_group_n`` resampling units (respondents or personas) on either side are
    left out; a unit or model whose share of failed calls exceeds ``parse_failure_threshold`` is degraded
    (the run exits 1).

    Examples
    --------
    >>> SurveyAnalysisPlan().model_dump()
    {'smoothing': 0.001, 'bootstrap_draws': 1000, 'bootstrap_seed': 20260729, 'ci_level': 0.95, \
'min_group_n': 10, 'parse_failure_threshold': 0.05}
    """

    smoothing: float = Field(default=DEFAULT_SMOOTHING, gt=0.0, le=0.1)
    bootstrap_draws: int = Field(default=SURVEY_BOOTSTRAP_DRAWS, ge=MIN_BOOTSTRAP_DRAWS, le=MAX_BOOTSTRAP_DRAWS)
    bootstrap_seed: int = Field(default=ANALYSIS_SEED, ge=0, le=MAX_SEED)
    ci_level: float = Field(default=0.95, gt=0.5, lt=1.0)
    min_group_n: int = Field(default=10, ge=1, le=MAX_PERSONAS)
    parse_failure_threshold: float = Field(default=FAILURE_THRESHOLD, ge=0.0, le=1.0)

    def with_draws(self, draws: int | None) -> SurveyAnalysisPlan:
        """The plan with ``draws`` bootstrap draws (``--draws``) instead of its own; itself for None.

        >>> SurveyAnalysisPlan().with_draws(None).bootstrap_draws
        1000
        >>> try:
        ...     SurveyAnalysisPlan().with_draws(5)
        ... except InputError as err:
        ...     print(err.field, "|", err.problem)
        5 | must be >= 10
        """
        if draws is None:
            return self
        if draws < MIN_BOOTSTRAP_DRAWS:
            raise InputError("--draws", str(draws), f"must be >= {MIN_BOOTSTRAP_DRAWS}")
        return plan_from_settings({**self.model_dump(), "bootstrap_draws": int(draws)}, source="--draws")


def plan_from_settings(settings: Mapping[str, Any] | None, *, source: str = SCORING) -> SurveyAnalysisPlan:
    """The plan of a run's stored ``settings`` (``RUN/scoring.json``), parsed strictly; defaults where absent.

    A problem raises :class:`InputError` naming ``source`` and the field.
    """
    try:
        return SurveyAnalysisPlan.model_validate(dict(settings or {}))
    except ValidationError as err:
        field, problem = describe_validation_error(err, SurveyAnalysisPlan)
        raise InputError(source, join_field("settings", field), problem) from None
