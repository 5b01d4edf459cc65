"""Belief-behaviour consistency of a run's trials, summarised per model and arm for ``RUN/analysis``.

Examples
--------
>>> from pvsst.analysis.stats.plan import RunPlan
>>> outcomes = pd.DataFrame({"trial_id": ["1", "2"], "model": "m", "condition": "likes", "topic_id": "t",
...                          "seed": [1, 2], "like_rate_same_side": [0.6, 0.8]})
>>> table = belief_consistency_table(outcomes, RunPlan.pvsst(), None)
>>> table.loc[table["metric"] == "like_rate_same_side", ["n_blocks", "mean", "judge"]].values.tolist()
[[2, 0.7, '']]
"""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from pvsst.analysis.consistency.trials import STANCE_COLUMNS, SUMMARY_COLUMNS, consistency_by_arm, stance_consistency
from pvsst.analysis.stats.plan import CONSISTENCY_METRICS, JUDGED_METRICS, Contrast, RunPlan
from pvsst.core.errors import InputError

BY = ("model", "condition")


def belief_consistency_table(outcomes: pd.DataFrame, plan: RunPlan, judge: str | None) -> pd.DataFrame:
    """Per model x arm x consistency metric: mean over blocks, the plan's block-bootstrap interval, and
    ``judge`` (the judge the ``stance_*`` rows read; empty for the vote rows and without judgments).

    Metrics without any value (the ``stance_*`` ones of a run nobody judged) have no rows.
    """
    metrics = [m for m in CONSISTENCY_METRICS if m in outcomes.columns and outcomes[m].notna().any()]
    columns = [*BY, *SUMMARY_COLUMNS, "judge"]
    if not metrics or not set(BY) <= set(outcomes.columns):
        return pd.DataFrame(columns=columns)
    settings = plan.settings
    table = consistency_by_arm(outcomes, outcomes, by=BY, metrics=metrics, block=plan.block,
                               draws=settings.bootstrap_draws, seed=settings.bootstrap_seed, alpha=settings.alpha)
    table["judge"] = [judge or "" if metric in JUDGED_METRICS else "" for metric in table["metric"]]
    return table[columns]


def agent_round_table(data, judged: pd.DataFrame | None) -> pd.DataFrame:
    """Per honest agent-round with a judged post (:data:`~pvsst.analysis.consistency.trials.STANCE_COLUMNS`)
    of a run (:class:`~pvsst.analysis.store.reader.RunData`); no rows without judgments."""
    if judged is None or data.posts.empty:
        return pd.DataFrame(columns=list(STANCE_COLUMNS))
    agents = data.agents if not data.agents.empty else None
    return stance_consistency(data.posts, judged, agents)


def require_contrast_metrics(outcomes: pd.DataFrame, contrasts: Sequence[Contrast], *, source: str) -> None:
    """Every metric a contrast names must have values; a ``stance_*`` metric of a run no judge read, or a
    metric no trial has, is an :class:`InputError` naming ``analysis.contrasts.<name>.metrics``.

    Examples
    --------
    >>> outcomes = pd.DataFrame({"stance_contradiction_rate": [float("nan")]})
    >>> require_contrast_metrics(outcomes, [Contrast("c", "likes", "control", metrics=["stance_contradiction_rate"])],
    ...                          source="manifest.json")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    pvsst.core.errors.InputError: manifest.json: spec.analysis.contrasts.c.metrics[0]: 'stance_contradiction_rate'
    cannot be analysed (no stance judgments: run `pvsst judge RUN --judge NAME` first)
    """
    for contrast in contrasts:
        for index, metric in enumerate(contrast.metrics):
            if metric in outcomes.columns and outcomes[metric].notna().any():
                continue
            hint = (" (no stance judgments: run `pvsst judge RUN --judge NAME` first)" if metric in JUDGED_METRICS
                    else " (no trial has a value)")
            raise InputError(source, f"spec.analysis.contrasts.{contrast.name}.metrics[{index}]",
                             f"{metric!r} cannot be analysed{hint}")
