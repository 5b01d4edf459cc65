"""Spec sections that fix the analysis before any data exists: hypotheses, outcomes and the analysis plan.

Defaults are PV-SST's: 20,000 percentile-bootstrap draws over blocks with seed 20260729, a sign-flip
randomization test that is exhaustive up to 20 nonzero pairs and otherwise uses 1,000,000 draws,
alpha 0.05, a 5% parse-failure threshold, and Benjamini-Hochberg across secondary outcomes.
"""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from experiments.spec.base import Identifier, NonEmptyText, Share, SpecFieldError, StrictModel, first_duplicate

TRIAL_OUTCOME_METRICS = (
    "initial_alignment", "final_alignment", "delta_alignment", "final_pushed_side_share",
    "toward_push_share", "opposite_side_survival", "majority_capture", "final_honest_pairwise_similarity",
    "parse_error_rate", "vote_parse_error_rate",
)
"""Trial-outcome columns (PV-SST's names, DESIGN.md "Run store") a spec may name as a metric."""


def _unknown_metric(name: str) -> str:
    return f"unknown metric {name!r} (known: {', '.join(TRIAL_OUTCOME_METRICS)})"


def check_metric_names(names: list[str]) -> list[str]:
    """Validate a list of metric names: known trial-outcome columns, each at most once."""
    for index, name in enumerate(names):
        if name not in TRIAL_OUTCOME_METRICS:
            raise SpecFieldError(f"[{index}]", _unknown_metric(name))
    duplicate = first_duplicate(names)
    if duplicate:
        raise SpecFieldError(f"[{duplicate[0]}]", f"metric {duplicate[1]!r} listed twice")
    return names


class Hypothesis(StrictModel):
    """A directional claim about one contrast on one metric (``treatment - control``).

    Examples
    --------
    >>> Hypothesis(id="H1", statement="Likes ranking raises alignment.", contrast="likes_minus_control",
    ...            metric="delta_alignment", direction="positive", primary=True).direction
    'positive'
    """

    id: Identifier
    statement: NonEmptyText
    contrast: Identifier
    metric: str
    direction: Literal["positive", "negative", "two_sided"]
    primary: bool = False

    @field_validator("metric")
    @classmethod
    def _known_metric(cls, value: str) -> str:
        if value not in TRIAL_OUTCOME_METRICS:
            raise SpecFieldError("", _unknown_metric(value))
        return value


class Outcomes(StrictModel):
    """Primary outcomes (confirmatory) and secondary outcomes (corrected for multiplicity)."""

    primary: Annotated[list[str], Field(min_length=1)]
    secondary: list[str] = []

    @field_validator("primary", "secondary")
    @classmethod
    def _known_metrics(cls, value: list[str]) -> list[str]:
        return check_metric_names(value)

    @model_validator(mode="after")
    def _disjoint(self) -> Outcomes:
        for index, name in enumerate(self.secondary):
            if name in self.primary:
                raise SpecFieldError(f"secondary[{index}]", f"{name!r} is already a primary outcome")
        return self


class Contrast(StrictModel):
    """A paired difference between two arms, computed within each block: ``treatment - control``."""

    treatment: Identifier
    control: Identifier

    @model_validator(mode="after")
    def _two_arms(self) -> Contrast:
        if self.treatment == self.control:
            raise SpecFieldError("control", f"treatment and control are the same arm ({self.control!r})")
        return self


class RandomizationPlan(StrictModel):
    """Sign-flip randomization test on the mean paired difference.

    ``auto``: exhaustive over all 2^n sign patterns when n (nonzero pairs) <= ``exhaustive_max_n``, else
    Monte Carlo with ``draws`` patterns and p = (k + 1) / (draws + 1).
    """

    method: Literal["auto", "exhaustive", "monte_carlo"] = "auto"
    draws: Annotated[int, Field(ge=1)] = 1_000_000
    exhaustive_max_n: Annotated[int, Field(ge=1, le=30)] = 20


class ConsistencyCriterion(StrictModel):
    """A primary effect counts as consistent when it has the hypothesised sign overall and in at least
    these shares of model strata and of topic strata (PV-SST: 3 of 4 models, 2/3 of topics)."""

    min_model_share: Share = 0.75
    min_topic_share: Share = 2 / 3


class AnalysisPlan(StrictModel):
    """How the stored trials become statistics; ``metrics`` adds descriptive-only metrics to the outcomes.

    Examples
    --------
    >>> plan = AnalysisPlan(contrasts={"likes_minus_control": Contrast(treatment="likes", control="control")})
    >>> plan.bootstrap_draws, plan.bootstrap_seed, plan.multiplicity
    (20000, 20260729, 'fdr_bh')
    """

    contrasts: Annotated[dict[Identifier, Contrast], Field(min_length=1)]
    metrics: list[str] = []
    bootstrap_draws: Annotated[int, Field(ge=1)] = 20_000
    bootstrap_seed: Annotated[int, Field(ge=0)] = 20260729
    randomization: RandomizationPlan = RandomizationPlan()
    alpha: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.05
    consistency: ConsistencyCriterion = ConsistencyCriterion()
    parse_failure_threshold: Share = 0.05
    multiplicity: Literal["fdr_bh", "fdr_by", "holm", "bonferroni", "none"] = "fdr_bh"

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, value: list[str]) -> list[str]:
        return check_metric_names(value)
