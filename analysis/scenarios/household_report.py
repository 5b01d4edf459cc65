"""The within-household agreement a scenario run implies: its household factor, chained in two-adult homes.

A scenario run whose instrument has the factor :data:`HOUSEHOLD_FACTOR` with the levels
:data:`HOUSEHOLD_LEVELS` (no household member mentioned, a member reported, a member did not report)
gives each cell three probabilities of yes: alone ``p``, after a member who reported ``a``, after one
who did not ``b`` (each the mean over the run's other scenarios). Chained in a household of two adults
of the same cell (the first decides alone, the second given the first decision;
:mod:`pvsst.analysis.scenarios.household_agreement`), the two agree with probability
``p a + (1 - p)(1 - b)``. :func:`household_table` reports, per question x model x condition, the
population-weighted agreement and the Pearson correlation of the two decisions, computed exactly by
:func:`~pvsst.analysis.scenarios.household_agreement.expected_household_agreement` on one two-adult
household per member of each cell's population (a cell of 120 personas stands for 120 households).

Examples
--------
>>> table = pd.DataFrame({"cell_id": ["c1"] * 3, "household": ["none", "member_reported", "member_did_not_report"],
...                       "yes": [0.5, 0.9, 0.1], "weight": 10, "model": "m", "condition": "c"})
>>> household_table(table, "q")[["agreement", "correlation"]].round(6).values.tolist()
[[0.9, 0.8]]
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.analysis.scenarios.household_agreement import expected_household_agreement

HOUSEHOLD_FACTOR = "household"
HOUSEHOLD_LEVELS = ("none", "member_reported", "member_did_not_report")
COLUMNS = ("question", "model", "condition", "cells", "households", "agreement", "correlation", "yes_share")


def has_household_factor(levels: dict[str, list[str]]) -> bool:
    """Whether a run's scenario factors (factor -> levels) include the household factor with its three levels.

    Parameters
    ----------
    levels
        Each scenario factor's level ids.

    Returns
    -------
    bool

    Examples
    --------
    >>> has_household_factor({"household": ["none", "member_reported", "member_did_not_report"]})
    True
    """
    return set(HOUSEHOLD_LEVELS) <= set(levels.get(HOUSEHOLD_FACTOR, []))


def household_table(table: pd.DataFrame, question: str) -> pd.DataFrame:
    """The chained two-adult agreement per model x condition of one question's decision table (module docstring).

    Parameters
    ----------
    table
        A decision table (:func:`pvsst.analysis.scenarios.decisions.decision_table`) with ``cell_id`` (or
        ``persona_id``), the ``household`` factor, ``yes``, ``model``, ``condition`` and optionally
        ``weight`` (a cell's population; default 1).
    question
        The question's id, copied into the table.

    Returns
    -------
    pandas.DataFrame
        :data:`COLUMNS`: cells used, households (the summed weights), exact agreement, pair correlation
        and the mean P(yes) over the pairs' decisions.

    Examples
    --------
    >>> table = pd.DataFrame({"persona_id": ["a"] * 3, "household": list(HOUSEHOLD_LEVELS), "yes": [0.5, 0.5, 0.5],
    ...                       "model": "m", "condition": "c"})
    >>> float(household_table(table, "q")["correlation"].iloc[0])
    0.0
    """
    cell = "cell_id" if "cell_id" in table.columns else "persona_id"
    weight = table["weight"] if "weight" in table.columns else pd.Series(1.0, index=table.index)
    frame = table.assign(_cell=table[cell].astype(str), _weight=weight.astype(float),
                         _level=table[HOUSEHOLD_FACTOR].astype(str))
    rows = []
    for (model, condition), part in frame.groupby(["model", "condition"], sort=True):
        p = part.pivot_table(index="_cell", columns="_level", values="yes", aggfunc="mean")
        p = p.dropna(subset=[level for level in HOUSEHOLD_LEVELS if level in p.columns])
        if not set(HOUSEHOLD_LEVELS) <= set(p.columns) or p.empty:
            continue
        homes = np.maximum(np.rint(part.groupby("_cell")["_weight"].first().loc[p.index].to_numpy()), 1).astype(int)
        cells = np.repeat(np.arange(len(p)), homes)
        household = np.repeat(np.arange(cells.size), 2)
        member = np.tile([0, 1], cells.size)
        person_cell = np.repeat(cells, 2)
        alone, after_yes, after_no = (p[level].to_numpy()[person_cell] for level in HOUSEHOLD_LEVELS)
        exact = expected_household_agreement(household, member, alone, after_yes, after_no)
        rows.append({"question": question, "model": model, "condition": condition, "cells": len(p),
                     "households": int(homes.sum()), "agreement": exact.agreement, "correlation": exact.correlation,
                     "yes_share": exact.yes_share})
    return pd.DataFrame(rows, columns=list(COLUMNS))
