"""The decision table of a scenario run's question: one row per persona (cell) x scenario x model x
condition, with the factors that may explain the decision (what
:mod:`pvsst.analysis.scenarios.report` decomposes and :mod:`pvsst.analysis.scenarios.bank_table` turns
into an epidemic's reporting bank).

The decision is the question's *first* option (``yes`` is the share of answers choosing it, or its
probability under ``logprobs`` / ``verbalized`` elicitation); the scenario factors' levels are read from
the response's scenario id (``factor=level`` joined by ``;``; the first level the instrument lists is the
reference). The reference controls (conditions ``reference*``) are left out. In a cell run each row
carries its cell's population as ``weight``.

Examples
--------
>>> responses = pd.DataFrame({"persona_id": ["c1", "c2"] * 2, "question": "report", "condition": "cells",
...     "provider": "scripted/x", "elicitation": "sample", "answer": ["yes", "no", "yes", "yes"],
...     "parse_ok": True, "probabilities": None, "scenario": ["news=none"] * 2 + ["news=loss"] * 2})
>>> personas = pd.DataFrame({"persona_id": ["c1", "c2"], "income_band": ["high", "low"]})
>>> spec = {"questions": [{"id": "report", "options": [{"code": "yes"}, {"code": "no"}]}],
...         "scenarios": {"factors": [{"id": "news", "levels": [{"id": "none"}, {"id": "loss"}]}]}}
>>> decision_table(responses, personas, spec, "report")[["income_band", "news", "yes", "n"]].values.tolist()
[['high', 'none', 1.0, 1], ['low', 'none', 0.0, 1], ['high', 'loss', 1.0, 1], ['low', 'loss', 1.0, 1]]
"""
from __future__ import annotations

import json

import pandas as pd

from pvsst.core.errors import InputError
from pvsst.core.run_layout import SURVEY

SCENARIO_COLUMN = "scenario"
REFERENCE_PREFIX = "reference"


def scenario_levels(scenario_id: str) -> dict[str, str]:
    """The level of each factor of a scenario id (``factor=level`` joined by ``;``).

    Parameters
    ----------
    scenario_id
        A response's ``scenario``.

    Returns
    -------
    dict
        Factor -> level.

    Examples
    --------
    >>> scenario_levels("cases=none;news=loss")
    {'cases': 'none', 'news': 'loss'}
    """
    return dict(part.split("=", 1) for part in str(scenario_id).split(";"))


def _first_code(spec: dict, question: str) -> str:
    for item in spec.get("questions") or []:
        if item.get("id") == question:
            return str(item["options"][0]["code"])
    raise InputError(SURVEY, "questions", f"no question {question!r} in the instrument")


def decision_table(responses: pd.DataFrame, personas: pd.DataFrame, spec: dict, question: str) -> pd.DataFrame:
    """The decision table of one question (module docstring): one row per persona (cell) x scenario x
    model x condition, with the factor columns, ``yes``, ``n`` and, in a cell run, ``weight``.

    Parameters
    ----------
    responses
        The run's responses (with the ``scenario`` column of a scenario run).
    personas
        The run's personas (a cell run: one row per cell, with ``weight``).
    spec
        The effective instrument (``survey.json``'s ``spec``).
    question
        The question's id.

    Returns
    -------
    pandas.DataFrame
        Factor columns, ``yes`` (share choosing the first option), ``n`` (answers behind it), ``weight``.

    Examples
    --------
    >>> responses = pd.DataFrame({"persona_id": ["a", "a"], "question": "q", "condition": "c", "provider": "m",
    ...     "elicitation": "logprobs", "answer": "yes", "parse_ok": True, "scenario": ["f=x", "f=y"],
    ...     "probabilities": ['{"yes": 0.25, "no": 0.75}', '{"yes": 0.5, "no": 0.5}']})
    >>> spec = {"questions": [{"id": "q", "options": [{"code": "yes"}, {"code": "no"}]}]}
    >>> decision_table(responses, pd.DataFrame({"persona_id": ["a"]}), spec, "q")["yes"].tolist()
    [0.25, 0.5]
    """
    if SCENARIO_COLUMN not in responses.columns:
        raise InputError("responses", SCENARIO_COLUMN, "not a scenario run (no scenario column)")
    code = _first_code(spec, question)
    rows = responses[(responses["question"] == question) & responses["parse_ok"].astype(bool)
                     & ~responses["condition"].astype(str).str.startswith(REFERENCE_PREFIX)].copy()
    distributed = rows["elicitation"].isin(("logprobs", "verbalized"))
    yes = (rows["answer"] == code).astype(float)
    if distributed.any():
        yes[distributed] = [float(json.loads(p).get(code, 0.0)) for p in rows.loc[distributed, "probabilities"]]
    rows["_yes"] = yes
    levels = pd.DataFrame([scenario_levels(s) for s in rows[SCENARIO_COLUMN]], index=rows.index)
    order = {f["id"]: [lv["id"] for lv in f["levels"]] for f in (spec.get("scenarios") or {}).get("factors", [])}
    categories = {factor: order.get(factor) or sorted(levels[factor].unique()) for factor in levels.columns}
    for factor, known in categories.items():
        rows[factor] = pd.Categorical(levels[factor], categories=known)
    keys = ["persona_id", SCENARIO_COLUMN, "provider", "condition"]
    pooled = rows.groupby(keys, sort=False, observed=True).agg(
        yes=("_yes", "mean"), n=("_yes", "size"), **{f: (f, "first") for f in levels.columns}).reset_index()
    pooled = pooled.merge(personas.assign(persona_id=personas["persona_id"].astype(str)), on="persona_id",
                          how="left", validate="many_to_one", suffixes=("", "_persona"))
    pooled = pooled.rename(columns={"provider": "model"})
    if not distributed.all():
        pooled["n"] = pooled["n"].astype(int)
    else:
        pooled = pooled.drop(columns="n")
    for factor, known in categories.items():
        pooled[factor] = pd.Categorical(pooled[factor], categories=known)
    return pooled.reset_index(drop=True)
