"""A verdict per preregistered hypothesis, by the criterion frozen in the spec.

A hypothesis names a contrast, a metric and a direction (positive, negative or two_sided). Its verdict:

- **NOT EVALUATED**: the analysis has no overall row for that contrast and metric.
- **NOT POWERED**: with n blocks the exact sign-flip test cannot reach alpha at all (its smallest
  attainable two-sided p is ``2 / 2**n``), so no result could count as evidence.
- **SUPPORTED**: the effect is *consistent* (the hypothesised sign overall and in at least the
  preregistered shares of model and topic strata; for two_sided, the observed sign) **and** significant:
  randomization p < alpha for a primary hypothesis, the multiplicity-adjusted p (the spec's rule, e.g.
  Benjamini-Hochberg, across the secondary hypotheses) < alpha for a secondary one.
- **CONTRADICTED**: significant with the sign opposite to a directional hypothesis.
- **NOT SUPPORTED**: anything else (the reason says which part failed).

Examples
--------
>>> import pandas as pd
>>> rows = pd.DataFrame({"contrast": "c", "metric": "y", "stratum_type": ["overall", "model", "topic"],
...                      "stratum": ["all", "m", "t"], "n_blocks": 8, "mean_difference": 0.2,
...                      "ci95_low": 0.1, "ci95_high": 0.3, "sign_test_p": 0.008, "randomization_p": 0.0078})
>>> hypothesis = {"id": "H1", "statement": "c raises y", "contrast": "c", "metric": "y",
...               "direction": "positive", "primary": True}
>>> [v.verdict for v in hypothesis_verdicts([hypothesis], rows)]
['SUPPORTED']
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pvsst.analysis.stats.preregistered_checks import ConsistencyVerdict, adjusted_p_values, consistency_check

SUPPORTED, NOT_SUPPORTED, CONTRADICTED = "SUPPORTED", "NOT SUPPORTED", "CONTRADICTED"
NOT_POWERED, NOT_EVALUATED = "NOT POWERED", "NOT EVALUATED"
DIRECTION_SIGN = {"positive": 1, "negative": -1}


@dataclass(frozen=True)
class HypothesisVerdict:
    """One preregistered hypothesis beside what the run found."""

    id: str
    statement: str
    contrast: str
    metric: str
    direction: str
    primary: bool
    verdict: str
    reason: str
    n_blocks: int = 0
    mean_difference: float = float("nan")
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    sign_test_p: float = float("nan")
    randomization_p: float = float("nan")
    adjusted_p: float = float("nan")
    consistency: ConsistencyVerdict | None = None

    @property
    def test_p(self) -> float:
        """The p the verdict used: randomization p (primary) or the adjusted p (secondary)."""
        return self.randomization_p if self.primary else self.adjusted_p


def min_attainable_p(n_blocks: int) -> float:
    """Smallest two-sided p an exact sign-flip test over ``n_blocks`` nonzero differences can give.

    >>> min_attainable_p(2), min_attainable_p(8)
    (0.5, 0.0078125)
    """
    return min(1.0, 2.0 / 2.0 ** max(int(n_blocks), 0))


def hypotheses_or_default(spec: Mapping | None, contrasts: pd.DataFrame, primary_metric: str) -> list[dict]:
    """The spec's hypotheses; without any, one two-sided hypothesis per contrast on the primary metric."""
    hypotheses = list((spec or {}).get("hypotheses") or [])
    if hypotheses:
        return [dict(h) for h in hypotheses]
    names = list(dict.fromkeys(contrasts.loc[contrasts["metric"] == primary_metric, "contrast"]))
    return [{"id": f"C{i + 1}", "statement": f"(not preregistered) {name} differs from zero on {primary_metric}",
             "contrast": name, "metric": primary_metric, "direction": "two_sided", "primary": True}
            for i, name in enumerate(names)]


def hypothesis_verdicts(hypotheses: Sequence[Mapping], contrasts: pd.DataFrame, *, alpha: float = 0.05,
                        min_model_share: float = 0.75, min_topic_share: float = 2 / 3,
                        multiplicity: str = "fdr_bh") -> list[HypothesisVerdict]:
    """Judge every hypothesis against the contrast table (PV-SST's published columns)."""
    overall = contrasts[contrasts["stratum_type"] == "overall"].set_index(["contrast", "metric"])
    rows = [overall.loc[(h["contrast"], h["metric"])] if (h["contrast"], h["metric"]) in overall.index
            else None for h in hypotheses]
    adjusted = _adjusted_secondary_p(hypotheses, rows, multiplicity)
    return [_verdict(h, row, adjusted[i], contrasts, alpha, min_model_share, min_topic_share)
            for i, (h, row) in enumerate(zip(hypotheses, rows))]


def _adjusted_secondary_p(hypotheses, rows, multiplicity: str) -> list[float]:
    adjusted = [float("nan")] * len(hypotheses)
    secondary = [i for i, (h, row) in enumerate(zip(hypotheses, rows))
                 if not h.get("primary", False) and row is not None]
    if secondary:
        p = np.array([float(rows[i]["randomization_p"]) for i in secondary])
        q = adjusted_p_values(p, multiplicity or "none")
        for i, value in zip(secondary, q):
            adjusted[i] = float(value)
    return adjusted


def _verdict(h: Mapping, row, adjusted_p: float, contrasts: pd.DataFrame, alpha: float,
             min_model_share: float, min_topic_share: float) -> HypothesisVerdict:
    base = dict(id=str(h["id"]), statement=str(h.get("statement", "")), contrast=str(h["contrast"]),
                metric=str(h["metric"]), direction=str(h.get("direction", "two_sided")),
                primary=bool(h.get("primary", False)))
    if row is None:
        return HypothesisVerdict(**base, verdict=NOT_EVALUATED,
                                 reason="the analysis has no overall result for this contrast and metric")
    mean = float(row["mean_difference"])
    numbers = dict(n_blocks=int(row["n_blocks"]), mean_difference=mean, ci_low=float(row["ci95_low"]),
                   ci_high=float(row["ci95_high"]), sign_test_p=float(row["sign_test_p"]),
                   randomization_p=float(row["randomization_p"]), adjusted_p=adjusted_p)
    sign = DIRECTION_SIGN.get(base["direction"], 1 if mean >= 0 else -1)
    signed = contrasts.assign(mean_difference=sign * contrasts["mean_difference"].astype(float))
    consistency = consistency_check(signed, base["contrast"], base["metric"], min_model_share=min_model_share,
                                    min_topic_share=min_topic_share)
    numbers["consistency"] = consistency
    floor = min_attainable_p(numbers["n_blocks"])
    if floor >= alpha:
        return HypothesisVerdict(**base, **numbers, verdict=NOT_POWERED,
                                 reason=f"{numbers['n_blocks']} blocks: the smallest attainable p is {floor:.3g} "
                                        f">= alpha {alpha:g}, so no result could be significant")
    p = numbers["randomization_p"] if base["primary"] else adjusted_p
    p_name = "randomization p" if base["primary"] else "adjusted p"
    significant = bool(p < alpha)
    strata = (f"{consistency.models_positive}/{consistency.n_models} models, "
              f"{consistency.topics_positive}/{consistency.n_topics} topics in the "
              f"{'hypothesised' if base['direction'] in DIRECTION_SIGN else 'observed'} direction")
    if significant and sign * mean < 0:
        return HypothesisVerdict(**base, **numbers, verdict=CONTRADICTED,
                                 reason=f"{p_name} {p:.3g} < {alpha:g} but the effect has the opposite sign")
    if significant and consistency.passed:
        return HypothesisVerdict(**base, **numbers, verdict=SUPPORTED,
                                 reason=f"{p_name} {p:.3g} < {alpha:g}; consistent ({strata})")
    failed = []
    if not significant:
        failed.append(f"{p_name} {p:.3g} >= {alpha:g}")
    if not consistency.passed:
        failed.append(f"not consistent ({strata}; needs >= {math.ceil(min_model_share * consistency.n_models - 1e-9)}"
                      f" models and >= {math.ceil(min_topic_share * consistency.n_topics - 1e-9)} topics"
                      + (", positive overall" if sign * mean <= 0 else "") + ")")
    return HypothesisVerdict(**base, **numbers, verdict=NOT_SUPPORTED, reason="; ".join(failed))
