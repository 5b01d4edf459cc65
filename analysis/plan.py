"""The analysis plan: which contrasts, metrics, blocks and strata, read from a frozen spec or defaulted.

A spec's ``analysis`` section may give (all optional; unknown keys are ignored here, the spec schema
validates them):

- ``contrasts``: a list of ``"NAME=TREATMENT-BASELINE"`` strings or ``{name, treatment, baseline}``
  mappings, or a mapping ``{NAME: "TREATMENT-BASELINE"}`` or ``{NAME: {treatment: A, control: B}}``
  (the pvsst spec schema's form);
- ``metrics`` (or ``primary_outcomes`` + ``secondary_outcomes``), ``block``, ``strata``;

The spec's top-level ``outcomes: {primary, secondary}`` and ``blocks: {block_key}`` are read too (the
metrics analysed are the primary outcomes, then the secondary ones, then ``analysis.metrics``).
- ``bootstrap_draws``, ``seed`` (or ``bootstrap_seed``), ``alpha``;
- ``consistency``: ``{min_model_share, min_topic_share}``; ``parse_failure_threshold``.

Without contrasts the PV-SST defaults are used, restricted to those whose two arms ran.

Examples
--------
>>> plan = plan_from_spec({"analysis": {"contrasts": ["eng=likes-control"]}}, conditions=["likes", "control"])
>>> [c.name for c in plan.contrasts], plan.metrics[0]
(['eng'], 'delta_alignment')
>>> [c.name for c in plan_from_spec({}, conditions=["likes", "control"]).contrasts]
['engagement_likes_minus_control']
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from analysis.block_tests import BOOTSTRAP_DRAWS, PVSST_SEED
from analysis.contrast_table import PVSST_CONTRASTS, PVSST_METRICS, PVSST_STRATA
from personas.errors import InputError
from analysis.paired import PVSST_BLOCK, Contrast


@dataclass(frozen=True)
class AnalysisPlan:
    """What ``pvsst analyze`` computes (PV-SST's confirmatory plan by default)."""

    contrasts: tuple[Contrast, ...] = PVSST_CONTRASTS
    metrics: tuple[str, ...] = PVSST_METRICS
    block: tuple[str, ...] = PVSST_BLOCK
    strata: tuple[str, ...] = PVSST_STRATA
    bootstrap_draws: int = BOOTSTRAP_DRAWS
    seed: int = PVSST_SEED
    alpha: float = 0.05
    min_model_share: float = 0.75
    min_topic_share: float = 2 / 3
    parse_failure_threshold: float = 0.05
    primary_metric: str = "final_honest_pairwise_similarity"


def plan_from_spec(spec: Mapping | None, conditions: Iterable[str] = ()) -> AnalysisPlan:
    """The plan of a frozen spec's ``analysis`` section; PV-SST defaults for what it leaves out."""
    section = dict((spec or {}).get("analysis") or {})
    source = "spec.analysis"
    conditions = set(conditions)
    if section.get("contrasts"):
        contrasts = tuple(_parse_contrasts(section["contrasts"], source))
    else:
        contrasts = tuple(c for c in PVSST_CONTRASTS
                          if not conditions or {c.treatment, c.baseline} <= conditions)
    outcomes = dict((spec or {}).get("outcomes") or {})
    if outcomes.get("primary"):
        section.setdefault("primary_outcomes", outcomes["primary"])
        section.setdefault("secondary_outcomes", outcomes.get("secondary") or [])
    block_key = ((spec or {}).get("blocks") or {}).get("block_key")
    if block_key:
        section.setdefault("block", block_key)
    metrics = list(section.get("metrics") or [])
    if section.get("primary_outcomes") or section.get("primary_outcome"):
        primary = section.get("primary_outcomes") or [section.get("primary_outcome")]
        listed = [*_as_list(primary), *_as_list(section.get("secondary_outcomes"))]
        metrics = list(dict.fromkeys([*listed, *metrics]))
    consistency = dict(section.get("consistency") or {})
    defaults = AnalysisPlan()
    return AnalysisPlan(
        contrasts=contrasts,
        metrics=tuple(metrics) if metrics else defaults.metrics,
        block=tuple(section.get("block") or defaults.block),
        strata=tuple(section.get("strata") or defaults.strata),
        bootstrap_draws=int(section.get("bootstrap_draws", defaults.bootstrap_draws)),
        seed=int(section.get("seed", section.get("bootstrap_seed", defaults.seed))),
        alpha=float(section.get("alpha", defaults.alpha)),
        min_model_share=float(consistency.get("min_model_share", defaults.min_model_share)),
        min_topic_share=float(consistency.get("min_topic_share", defaults.min_topic_share)),
        parse_failure_threshold=float(section.get("parse_failure_threshold",
                                                  defaults.parse_failure_threshold)),
        primary_metric=str(_as_list(section.get("primary_outcomes") or section.get("primary_outcome")
                                    or [defaults.primary_metric])[0]),
    )


def _parse_contrasts(entries, source: str) -> list[Contrast]:
    if isinstance(entries, Mapping):
        return [Contrast(str(name), str(arms["treatment"]), str(arms.get("control", arms.get("baseline"))))
                if isinstance(arms, Mapping) else Contrast.parse(f"{name}={arms}", source)
                for name, arms in entries.items()]
    contrasts = []
    for entry in entries:
        if isinstance(entry, str):
            contrasts.append(Contrast.parse(entry, source))
        elif isinstance(entry, Mapping) and {"name", "treatment", "baseline"} <= set(entry):
            contrasts.append(Contrast(str(entry["name"]), str(entry["treatment"]), str(entry["baseline"])))
        else:
            raise InputError(source, "contrasts", f"cannot read contrast {entry!r}")
    return contrasts


def _as_list(value) -> list:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)
