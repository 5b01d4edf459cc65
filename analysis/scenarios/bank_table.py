"""A scenario run's answers as a reporting bank table: each cell's P(yes) by case level (and household).

The epidemic model (``pvsst.sim.epidemic``) reads a bank table with the columns ``cell_id``,
``case_level``, ``household`` (optional) and ``p_yes``. :func:`reporting_bank_table` builds it from a
decision table of a cell run (:func:`pvsst.analysis.scenarios.decisions.decision_table`): the scenario
factor ``case_factor`` gives the case level (its levels renamed by ``case_levels`` to the bank's, e.g.
``{"none": "0", "under_10": "<10", ...}``), ``household_factor`` (optional) the household level
(renamed by ``household_levels``), and every other scenario factor is held at the level ``fixed``
names (a run's framing, say). ``p_yes`` is the row's yes share (its probability under ``logprobs``),
pooled over sampled draws with their counts.

Examples
--------
>>> table = pd.DataFrame({"cell_id": ["c1"] * 4, "cases": ["none", "many"] * 2, "news": ["a", "a", "b", "b"],
...                       "yes": [0.2, 0.6, 0.3, 0.7], "model": "m", "condition": "c"})
>>> reporting_bank_table(table, "cases", {"none": "0", "many": ">100"}, fixed={"news": "b"}).values.tolist()
[['c1', '0', 0.3], ['c1', '>100', 0.7]]
"""
from __future__ import annotations

import pandas as pd

from pvsst.core.errors import InputError

SOURCE = "reporting bank"


def _renamed(table: pd.DataFrame, factor: str, names: dict[str, str]) -> pd.Series:
    if factor not in table.columns:
        raise InputError(SOURCE, factor, "no such scenario factor in the run")
    values = table[factor].astype(str)
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise InputError(SOURCE, factor, f"level {unknown[0]!r} has no bank level (give one in the mapping)")
    return values.map(names)


def reporting_bank_table(table: pd.DataFrame, case_factor: str, case_levels: dict[str, str],
                         household_factor: str | None = None, household_levels: dict[str, str] | None = None,
                         fixed: dict[str, str] | None = None, scenario_factors=None) -> pd.DataFrame:
    """The bank table of a cell run's decision table (module docstring).

    Parameters
    ----------
    table
        A decision table with ``cell_id``, ``yes``, the scenario factor columns and optionally ``n``.
    case_factor, case_levels
        The factor that sets the case level, and each of its levels' bank name.
    household_factor, household_levels
        The factor that sets the household level, and its levels' bank names (``none``,
        ``member_reported``, ``member_did_not_report``); omit both for a bank without households.
    fixed
        The level every other scenario factor is held at.
    scenario_factors
        The scenario factor columns (default: every column besides ``cell_id``, ``yes``, ``n``,
        ``weight``, ``model``, ``condition`` and the case / household factors is held by ``fixed``).

    Returns
    -------
    pandas.DataFrame
        ``cell_id``, ``case_level``, (``household``,) ``p_yes``: one row per cell x level.

    Examples
    --------
    >>> table = pd.DataFrame({"cell_id": ["c1", "c1"], "cases": ["none", "none"], "yes": [1.0, 0.0], "n": [3, 1],
    ...                       "model": "m", "condition": "c"})
    >>> reporting_bank_table(table, "cases", {"none": "0"})["p_yes"].tolist()
    [0.75]
    """
    fixed = dict(fixed or {})
    for column in ("cell_id", "yes"):
        if column not in table.columns:
            raise InputError(SOURCE, column, "missing column of the decision table")
    for column in ("model", "condition"):
        if column in table.columns and table[column].nunique() > 1:
            raise InputError(SOURCE, column, f"the run has several ({', '.join(map(str, table[column].unique()))}): "
                             "select one before building a bank")
    rows = table
    for factor, level in fixed.items():
        if factor not in rows.columns:
            raise InputError(SOURCE, factor, "no such scenario factor in the run")
        rows = rows[rows[factor].astype(str) == level]
        if rows.empty:
            raise InputError(SOURCE, factor, f"no answer at level {level!r}")
    frame = pd.DataFrame({"cell_id": rows["cell_id"].astype(str),
                          "case_level": _renamed(rows, case_factor, case_levels)})
    if household_factor is not None:
        frame["household"] = _renamed(rows, household_factor, household_levels or {})
    n = rows["n"].astype(float) if "n" in rows.columns else pd.Series(1.0, index=rows.index)
    frame["_yes"], frame["_n"] = rows["yes"].astype(float) * n, n
    keys = list(frame.columns[:-2])
    pooled = frame.groupby(keys, sort=False).agg(yes=("_yes", "sum"), n=("_n", "sum"))
    if scenario_factors is not None:
        free = [f for f in scenario_factors if f not in fixed and f not in (case_factor, household_factor)]
        if free:
            raise InputError(SOURCE, free[0], "scenario factor neither a bank level nor fixed: name its level in fixed")
    pooled["p_yes"] = pooled["yes"] / pooled["n"]
    return pooled.reset_index()[[*keys, "p_yes"]]
