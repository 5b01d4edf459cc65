"""The analysis plan: the one definition of what a spec's ``analysis`` section may say, and what it means.

A study spec's ``analysis`` section *is* :class:`AnalysisPlan` (``pvsst.experiments.spec.study`` imports it);
its ``outcomes`` section is :class:`Outcomes` and each hypothesis a :class:`Hypothesis`. ``pvsst analyze``
reads the frozen spec a run recorded in its manifest and parses those sections again with the same strict
models (:func:`plan_from_spec`): an unknown key or a wrong type is an error naming the file and the field,
never a silently ignored setting. The statistics take every setting from the parsed plan.

Defaults are PV-SST's: 20,000 percentile-bootstrap draws over blocks with seed 20260729, a sign-flip
randomization test that is exhaustive up to 20 nonzero pairs and otherwise uses 1,000,000 draws,
alpha 0.05, a 5% parse-failure threshold, and Benjamini-Hochberg across secondary outcomes.

Examples
--------
>>> plan = plan_from_spec({"analysis": {"contrasts": {"eng": {"treatment": "likes", "control": "control"}},
...                                     "randomization": {"method": "monte_carlo", "draws": 999}}})
>>> [c.name for c in plan.contrasts], plan.metrics[0], plan.settings.randomization.draws
(['eng'], 'delta_alignment', 999)
>>> [c.name for c in plan_from_spec({}, conditions=["likes", "control"]).contrasts]
['engagement_likes_minus_control']
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from pvsst.core.bounds import MAX_BOOTSTRAP_DRAWS, MAX_RANDOMIZATION_DRAWS, MAX_SEED
from pvsst.core.defaults import ANALYSIS_SEED, BOOTSTRAP_DRAWS, FAILURE_THRESHOLD
from pvsst.core.errors import InputError
from pvsst.core.run_layout import MANIFEST
from pvsst.core.validation import (
    Identifier,
    NonEmptyText,
    Share,
    SpecFieldError,
    StrictModel,
    describe_validation_error,
    join_field,
    require_unique,
)

MONTE_CARLO_DRAWS = 1_000_000
EXHAUSTIVE_MAX_N = 20
PVSST_BLOCK = ("model", "topic_id", "seed")
PVSST_STRATA = ("model", "topic_id")
PVSST_METRICS = ("delta_alignment", "final_pushed_side_share", "toward_push_share",
                 "opposite_side_survival", "majority_capture", "final_honest_pairwise_similarity")
PVSST_PRIMARY_METRIC = "final_honest_pairwise_similarity"
JUDGED_METRICS = ("stance_exact_agreement", "stance_side_agreement", "stance_contradiction_rate",
                  "stance_signed_gap")
"""Belief-behaviour consistency, posts against reported stances: these need a stance judge's judgments."""
VOTE_METRICS = ("like_rate_same_side", "like_rate_other_side", "like_rate_chance", "same_side_like_gap")
"""Belief-behaviour consistency, votes against reported stances: these need no judge."""
CONSISTENCY_METRICS = JUDGED_METRICS + VOTE_METRICS
"""The per-trial consistency columns (besides the counts ``n_judged_posts`` and ``n_sided_votes``)."""
TRIAL_OUTCOME_METRICS = (
    "initial_alignment", "final_alignment", "delta_alignment", "final_pushed_side_share",
    "toward_push_share", "opposite_side_survival", "majority_capture", "final_honest_pairwise_similarity",
    "parse_error_rate", "vote_parse_error_rate", *CONSISTENCY_METRICS,
)
"""Trial-outcome columns (PV-SST's names, docs/run-store.md, then the belief-behaviour consistency
columns) a spec may name as a metric."""

_CONTRAST_PATTERN = re.compile(r"^\s*([A-Za-z0-9_.:]+)\s*=\s*([A-Za-z0-9_.:]+)\s*-\s*([A-Za-z0-9_.:]+)\s*$")


def _unknown_metric(name: str) -> str:
    return f"unknown metric {name!r} (known: {', '.join(TRIAL_OUTCOME_METRICS)})"


def check_metric_names(names: list[str]) -> list[str]:
    """Validate a list of metric names: known trial-outcome columns, each at most once.

    >>> check_metric_names(["delta_alignment"])
    ['delta_alignment']
    """
    for index, name in enumerate(names):
        if name not in TRIAL_OUTCOME_METRICS:
            raise SpecFieldError(f"[{index}]", _unknown_metric(name))
    require_unique(names, "metric")
    return names


class Contrast(StrictModel):
    """``name = treatment - control``: a paired difference between two arms, computed within each block.

    In a spec the name is the key of the ``contrasts`` mapping (``{NAME: {treatment: A, control: B}}``),
    so it is not written inside the entry and not part of the entry's canonical form. ``metrics`` adds
    metrics (trial-outcome columns, e.g. the belief-behaviour consistency ones) analysed for this
    contrast only, after the plan's; left out of the canonical form while empty.

    >>> Contrast("engagement", "likes", "control")
    Contrast(name='engagement', treatment='likes', control='control')
    >>> Contrast.parse("engagement=likes-control") == Contrast("engagement", "likes", "control")
    True
    """

    name: Annotated[str, Field(min_length=1, exclude=True)]
    treatment: Identifier
    control: Identifier
    metrics: list[str] = Field([], exclude_if=lambda value: not value, repr=False)

    def __init__(self, name: str | None = None, treatment: str | None = None, control: str | None = None,
                 /, **fields: Any):
        given = {"name": name, "treatment": treatment, "control": control}
        super().__init__(**{k: v for k, v in given.items() if v is not None}, **fields)

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, value: list[str]) -> list[str]:
        return check_metric_names(value)

    @model_validator(mode="after")
    def _two_arms(self) -> Contrast:
        if self.treatment == self.control:
            raise SpecFieldError("control", f"treatment and control are the same arm ({self.control!r})")
        return self

    @classmethod
    def parse(cls, text: str, source: str = "--contrast") -> Contrast:
        """Parse ``NAME=TREATMENT-CONTROL``; anything else raises :class:`InputError`."""
        match = _CONTRAST_PATTERN.match(text)
        if match is None:
            raise InputError(source, text, "malformed contrast (expected NAME=TREATMENT-BASELINE)")
        try:
            return cls(*match.groups())
        except ValidationError as err:
            raise InputError(source, text, describe_validation_error(err, cls)[1]) from None


PVSST_CONTRASTS = (
    Contrast("pdi_distributed_minus_single", "distributed_sources", "single_source"),
    Contrast("engagement_likes_minus_control", "likes", "control"),
    Contrast("single_minus_organic", "single_source", "likes"),
    Contrast("distributed_minus_organic", "distributed_sources", "likes"),
)


class Hypothesis(StrictModel):
    """A directional claim about one contrast on one metric (``treatment - control``).

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
    """Primary outcomes (confirmatory) and secondary outcomes (corrected for multiplicity).

    >>> Outcomes(primary=["delta_alignment"]).secondary
    []
    """

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


class RandomizationPlan(StrictModel):
    """Sign-flip randomization test on the mean paired difference.

    ``auto``: exhaustive over all 2^n sign patterns when n (nonzero pairs) <= ``exhaustive_max_n``, else
    Monte Carlo with ``draws`` patterns and p = (k + 1) / (draws + 1). ``exhaustive`` and
    ``monte_carlo`` use that method for every row.

    >>> RandomizationPlan().method, RandomizationPlan().draws
    ('auto', 1000000)
    """

    method: Literal["auto", "exhaustive", "monte_carlo"] = "auto"
    draws: Annotated[int, Field(ge=1, le=MAX_RANDOMIZATION_DRAWS)] = MONTE_CARLO_DRAWS
    exhaustive_max_n: Annotated[int, Field(ge=1, le=30)] = EXHAUSTIVE_MAX_N


class ConsistencyCriterion(StrictModel):
    """A primary effect counts as consistent when it has the hypothesised sign overall and in at least
    these shares of model strata and of topic strata (PV-SST: 3 of 4 models, 2/3 of topics).

    >>> ConsistencyCriterion().min_model_share
    0.75
    """

    min_model_share: Share = 0.75
    min_topic_share: Share = 2 / 3


class AnalysisPlan(StrictModel):
    """How the stored trials become statistics; ``metrics`` adds descriptive-only metrics to the outcomes.

    ``stance_judge`` names the judge (``lexicon`` or a model string) whose judgments
    (``pvsst judge RUN``) the post measure of belief-behaviour consistency uses; absent, the first
    language-model judge that judged the run, else the lexicon judge. It is left out of the canonical
    form while absent.

    Examples
    --------
    >>> plan = AnalysisPlan(contrasts={"likes_minus_control": {"treatment": "likes", "control": "control"}})
    >>> plan.bootstrap_draws, plan.bootstrap_seed, plan.multiplicity, plan.contrasts["likes_minus_control"].name
    (20000, 20260729, 'fdr_bh', 'likes_minus_control')
    """

    contrasts: Annotated[dict[Identifier, Contrast], Field(min_length=1)]
    metrics: list[str] = []
    bootstrap_draws: Annotated[int, Field(ge=1, le=MAX_BOOTSTRAP_DRAWS)] = BOOTSTRAP_DRAWS
    bootstrap_seed: Annotated[int, Field(ge=0, le=MAX_SEED)] = ANALYSIS_SEED
    randomization: RandomizationPlan = RandomizationPlan()
    alpha: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.05
    consistency: ConsistencyCriterion = ConsistencyCriterion()
    parse_failure_threshold: Share = FAILURE_THRESHOLD
    multiplicity: Literal["fdr_bh", "fdr_by", "holm", "bonferroni", "none"] = "fdr_bh"
    stance_judge: NonEmptyText | None = Field(None, exclude_if=lambda value: value is None)

    @field_validator("contrasts", mode="before")
    @classmethod
    def _names_from_keys(cls, value: Any) -> Any:
        """Each contrast is named by its key; a ``name`` written inside the entry is an unknown key."""
        if not isinstance(value, Mapping):
            return value
        named = {}
        for key, entry in value.items():
            if isinstance(entry, Contrast):
                if entry.name != key:
                    raise SpecFieldError(f"{key}", f"contrast named {entry.name!r} under key {key!r}")
            elif isinstance(entry, Mapping):
                if "name" in entry:
                    raise SpecFieldError(f"{key}.name", "unknown key (a contrast is named by its key)")
                entry = {**entry, "name": key}
            named[key] = entry
        return named

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, value: list[str]) -> list[str]:
        return check_metric_names(value)


@dataclass(frozen=True)
class RunPlan:
    """What ``pvsst analyze`` computes for one run: the frozen ``settings`` and what the spec's other
    sections fix (metrics from ``outcomes``, blocks from ``blocks.block_key``); PV-SST's plan by default.

    ``contrasts`` are the ones analysed (the spec's, in its order); ``strata`` are always PV-SST's model
    and topic columns (those present in the table).
    """

    settings: AnalysisPlan
    contrasts: tuple[Contrast, ...]
    metrics: tuple[str, ...] = PVSST_METRICS
    block: tuple[str, ...] = PVSST_BLOCK
    strata: tuple[str, ...] = PVSST_STRATA
    primary_metric: str = PVSST_PRIMARY_METRIC

    @classmethod
    def pvsst(cls, conditions: Iterable[str] = ()) -> RunPlan:
        """PV-SST's confirmatory plan, restricted to the contrasts whose two arms are in ``conditions``.

        Examples
        --------
        >>> [c.name for c in RunPlan.pvsst(["likes", "control"]).contrasts]
        ['engagement_likes_minus_control']
        """
        conditions = set(conditions)
        settings = AnalysisPlan(contrasts={c.name: c for c in PVSST_CONTRASTS})
        return cls(settings, tuple(c for c in PVSST_CONTRASTS
                                   if not conditions or {c.treatment, c.control} <= conditions))


def plan_from_spec(spec: Mapping | None, conditions: Iterable[str] = (), *,
                   source: str = MANIFEST) -> RunPlan:
    """The plan of a frozen spec (a canonical spec mapping), parsed strictly.

    A spec without an ``analysis`` section (or no spec) gets PV-SST's plan restricted to ``conditions``.
    The ``analysis`` and ``outcomes`` sections and ``blocks.block_key`` are validated by the same models
    as the spec itself; a problem raises :class:`InputError` naming ``source`` and the field.
    """
    spec = dict(spec or {})
    if not spec.get("analysis"):
        return RunPlan.pvsst(conditions)
    settings = _parse(AnalysisPlan, spec["analysis"], source, "spec.analysis")
    outcomes = _parse(Outcomes, spec["outcomes"], source, "spec.outcomes") if spec.get("outcomes") else None
    block = tuple((spec.get("blocks") or {}).get("block_key") or PVSST_BLOCK)
    listed = [*outcomes.primary, *outcomes.secondary] if outcomes else list(PVSST_METRICS)
    return RunPlan(settings, tuple(settings.contrasts.values()),
                   metrics=tuple(dict.fromkeys([*listed, *settings.metrics])), block=block,
                   primary_metric=outcomes.primary[0] if outcomes else PVSST_PRIMARY_METRIC)


def _parse(model: type[StrictModel], data: Any, source: str, prefix: str):
    try:
        return model.model_validate(data)
    except ValidationError as err:
        field, problem = describe_validation_error(err, model)
        raise InputError(source, join_field(prefix, field), problem) from None
