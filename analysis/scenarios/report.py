"""The scenario report of a survey run: what explains each yes / no decision, as tables.

A scenario run (an instrument with a ``scenarios`` section) answers every cell (or persona) x scenario x
question. For each question, :func:`pvsst.analysis.scenarios.decisions.decision_table` turns its responses
into a decision table of :mod:`pvsst.analysis.scenarios.decomposition`: the decision is the question's
*first* option (``yes`` is the share of answers choosing it, or its probability under ``logprobs`` /
``verbalized`` elicitation), and the factors are

- the persona (cell) attributes that vary across the run: a cell run's ``cells.attributes``, else the
  persona columns of the instrument's grouping axes (the attributes it compares groups by);
- every scenario factor with at least two levels asked (its levels read from the response's scenario
  id, ``factor=level`` joined by ``;``; the first level the instrument lists is the reference);
- ``model`` and ``condition`` when the run asks more than one.

The reference controls (conditions ``reference*``) are left out. In a cell run each row carries its
cell's population as ``weight``. :func:`scenario_report` decomposes every question
(:func:`~pvsst.analysis.scenarios.decomposition.decompose` with ``method="drop_one"``: each factor's
deviance explained beyond all the others, over the intercept-only deviance, with basic bootstrap intervals
and average marginal effects) with the instrument's ``analysis.bootstrap_draws``, ``bootstrap_seed`` and
``ci_level``. Drop-one rather than Shapley: a cell run's attributes are correlated (income with
education), and Shapley values would hand a factor that changes nothing a share of what its correlates
explain; and drop-one fits K + 2 models per bootstrap draw, not 2^K. Scenario factors are crossed with
every cell by design, so for them the two agree. With the household factor
(:mod:`pvsst.analysis.scenarios.household_report`) the report also holds the within-household agreement
and correlation of decisions chained in two-adult households, and the decision rate of every level of
every factor and (a cell run) Census region (:mod:`pvsst.analysis.scenarios.rates`).
:func:`write_scenario_report` writes ``scenario_shares.csv``, ``scenario_effects.csv``,
``scenario_rates.csv`` and ``scenario_households.csv`` (with a household factor); ``pvsst report`` draws
one figure per question from them (``report/figures/scenario_decomposition_<question>.png``) and shows
the shares and rates tables.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pvsst.analysis.scenarios.decisions import SCENARIO_COLUMN, decision_table
from pvsst.analysis.scenarios.decomposition import Decomposition, decompose
from pvsst.analysis.scenarios.household_report import has_household_factor, household_table
from pvsst.analysis.scenarios.rates import decision_rates
from pvsst.core.atomic import atomic_file
from pvsst.core.run_layout import ANALYSIS

METHOD = "drop_one"
SHARES_FILE, EFFECTS_FILE = "scenario_shares.csv", "scenario_effects.csv"
HOUSEHOLDS_FILE, RATES_FILE = "scenario_households.csv", "scenario_rates.csv"


def _persona_factors(personas: pd.DataFrame, spec: dict) -> list[str]:
    cells = (spec.get("cells") or {}).get("attributes")
    candidates = list(cells) if cells else [g["persona_column"] for g in spec.get("grouping") or []]
    return [c for c in candidates if c in personas.columns and personas[c].nunique() > 1]


def decision_factors(table: pd.DataFrame, personas: pd.DataFrame, spec: dict) -> list[str]:
    """The factors of a decision table that vary (module docstring), persona attributes first.

    Parameters
    ----------
    table
        A :func:`decision_table`.
    personas, spec
        The run's personas and instrument.

    Returns
    -------
    list of str

    Examples
    --------
    >>> table = pd.DataFrame({"sex": ["f", "m"], "news": ["a", "b"], "model": "m", "condition": "c"})
    >>> decision_factors(table, pd.DataFrame({"persona_id": ["1", "2"], "sex": ["f", "m"]}),
    ...                  {"grouping": [{"persona_column": "sex"}], "scenarios": {"factors": [{"id": "news"}]}})
    ['sex', 'news']
    """
    scenario = [f["id"] for f in (spec.get("scenarios") or {}).get("factors", [])]
    named = [*_persona_factors(personas, spec), *scenario, "model", "condition"]
    return [f for f in dict.fromkeys(named) if f in table.columns and table[f].nunique() > 1]


@dataclass(frozen=True)
class ScenarioReport:
    """The decomposition of each question of a scenario run (``by_question``) and its two tables, with a
    household factor the within-household agreement it implies (``households``,
    :func:`pvsst.analysis.scenarios.household_report.household_table`), and the decision rates by factor
    level and region (``rates``, :func:`pvsst.analysis.scenarios.rates.decision_rates`, a ``question``
    column first)."""

    by_question: dict[str, Decomposition]
    households: pd.DataFrame | None = None
    rates: pd.DataFrame | None = None

    def shares(self) -> pd.DataFrame:
        """Every question's share table, with a ``question`` column first and, last, the ``method`` and
        ``interval`` it was computed with."""
        frames = [d.shares.assign(question=q, method=d.method, interval=d.interval)
                  for q, d in self.by_question.items()]
        return pd.concat(frames, ignore_index=True)[
            ["question", *next(iter(self.by_question.values())).shares.columns, "method", "interval"]]

    def effects(self) -> pd.DataFrame:
        """Every question's average marginal effects, with a ``question`` column first."""
        return pd.concat([d.effects.assign(question=q) for q, d in self.by_question.items()], ignore_index=True)[
            ["question", *next(iter(self.by_question.values())).effects.columns]]


def scenario_report(responses: pd.DataFrame, personas: pd.DataFrame, spec: dict,
                    cell_counts: pd.DataFrame | None = None) -> ScenarioReport | None:
    """Decompose every question of a scenario run (module docstring); ``None`` for a run without scenarios.

    Parameters
    ----------
    responses, personas, spec
        The run's responses, personas (with ``weight`` in a cell run) and effective instrument.
    cell_counts
        A cell run's counts per state (``CellPopulation.counts``: ``cell_id``, ``state``, ``count``): adds
        the rates by Census region.

    Returns
    -------
    ScenarioReport or None

    Examples
    --------
    >>> scenario_report(pd.DataFrame({"answer": []}), pd.DataFrame(), {}) is None
    True
    """
    if not spec.get("scenarios") or SCENARIO_COLUMN not in responses.columns:
        return None
    settings = spec["analysis"]
    levels = {f["id"]: [lv["id"] for lv in f["levels"]] for f in spec["scenarios"]["factors"]}
    out, households, rates = {}, [], []
    for question in [q["id"] for q in spec.get("questions") or []]:
        table = decision_table(responses, personas, spec, question)
        if has_household_factor(levels):
            households.append(household_table(table if spec.get("cells") else table.drop(columns="weight",
                                                                                           errors="ignore"), question))
        factors = decision_factors(table, personas, spec)
        if not factors:
            continue
        if not spec.get("cells"):  # only a cell's weight (its population) is a design weight
            table = table.drop(columns="weight", errors="ignore")
        by_level = decision_rates(table, [f for f in factors if f not in ("model", "condition")],
                                  cell_counts if spec.get("cells") else None)
        rates.append(by_level.assign(question=question)[["question", *by_level.columns]])
        out[question] = decompose(table, factors, method=METHOD, bootstrap_draws=int(settings["bootstrap_draws"]),
                                  seed=int(settings["bootstrap_seed"]), ci_level=float(settings["ci_level"]),
                                  source=f"question {question}")
    if not out:
        return None
    return ScenarioReport(out, pd.concat(households, ignore_index=True) if households else None,
                          pd.concat(rates, ignore_index=True))


def write_scenario_report(report: ScenarioReport, run_dir: str | Path) -> list[Path]:
    """Write ``RUN/analysis/scenario_shares.csv``, ``scenario_effects.csv``, ``scenario_rates.csv`` and
    ``scenario_households.csv`` (with a household factor); return the paths written. ``pvsst report``
    draws the decomposition figures from them (:mod:`pvsst.analysis.report.survey.scenarios`).

    Parameters
    ----------
    report
        A :func:`scenario_report`.
    run_dir
        The run directory.

    Returns
    -------
    list of Path

    Examples
    --------
    >>> write_scenario_report(report, "RUN")  # doctest: +SKIP
    """
    folder = Path(run_dir) / ANALYSIS
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    tables = [(SHARES_FILE, report.shares()), (EFFECTS_FILE, report.effects())]
    if report.rates is not None:
        tables.append((RATES_FILE, report.rates))
    if report.households is not None:
        tables.append((HOUSEHOLDS_FILE, report.households))
    for name, frame in tables:
        with atomic_file(folder / name) as tmp:
            frame.to_csv(tmp, index=False)
        paths.append(folder / name)
    return paths
