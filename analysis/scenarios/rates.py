"""Decision rates of a scenario run by factor level and by region: "who would report, and where".

A decision table (:func:`pvsst.analysis.scenarios.decisions.decision_table`) holds one row per cell (or
persona) x scenario x model x condition with ``yes``, the share choosing the question's first option,
and in a cell run each cell's population as ``weight``. :func:`decision_rates` gives, per model and
condition,

- for every factor (a cell attribute such as income or education, or a scenario factor such as the
  framing) and each of its levels, the population-weighted mean of ``yes`` over the rows at that level:
  ``rate = sum(w * yes) / sum(w)``, every scenario asked of a cell counting once;
- with the run's cell counts per state (a cell run's
  :attr:`~pvsst.analysis.survey.cells.population.CellPopulation.counts`: ``cell_id``, ``state``,
  ``count``), for every Census region, the mean over each cell's scenarios weighted by the cell's
  personas in that region's states: ``rate_r = sum_c N_cr * ybar_c / sum_c N_cr``.

``population`` is the persona count behind a level (its distinct cells' weights; a region's counts).

Examples
--------
>>> table = pd.DataFrame({"persona_id": ["a", "a", "b", "b"], "model": "m", "condition": "c",
...     "income": ["high", "high", "low", "low"], "news": ["none", "loss"] * 2,
...     "yes": [0.8, 0.6, 0.2, 0.4], "weight": [3.0, 3.0, 1.0, 1.0]})
>>> rates = decision_rates(table, ["income", "news"])
>>> rates.round(6)[["factor", "level", "rate", "population"]].values.tolist()
[['income', 'high', 0.7, 3.0], ['income', 'low', 0.3, 1.0], ['news', 'none', 0.65, 4.0], ['news', 'loss', 0.55, 4.0]]
>>> counts = pd.DataFrame({"cell_id": ["a", "b", "b"], "state": ["TX", "TX", "NY"], "count": [3, 1, 0]})
>>> decision_rates(table, [], counts).round(6)[["factor", "level", "rate"]].values.tolist()
[['region', 'South', 0.6]]
"""
from __future__ import annotations

import pandas as pd

from pvsst.personas.geography import REGION_OF_STATE, REGIONS

REGION_FACTOR = "region"
KEYS = ["model", "condition"]


def _weights(table: pd.DataFrame) -> pd.Series:
    return table["weight"].astype(float) if "weight" in table.columns else pd.Series(1.0, index=table.index)


def _factor_rates(table: pd.DataFrame, factor: str) -> pd.DataFrame:
    frame = table.assign(_w=_weights(table), _wy=_weights(table) * table["yes"].astype(float))
    grouped = frame.groupby([*KEYS, factor], observed=True, sort=False)
    sums = grouped[["_w", "_wy"]].sum()
    people = frame.drop_duplicates([*KEYS, factor, "persona_id"]).groupby([*KEYS, factor], observed=True)["_w"].sum()
    out = pd.DataFrame({"rate": sums["_wy"] / sums["_w"], "population": people}).reset_index()
    out = out.rename(columns={factor: "level"}).assign(factor=factor)
    levels = table[factor].cat.categories if isinstance(table[factor].dtype, pd.CategoricalDtype) \
        else pd.unique(table[factor])  # the instrument's level order, else the table's
    out["_order"] = out["level"].map({level: i for i, level in enumerate(levels)}).astype(int)
    out = out.sort_values([*KEYS, "_order"], kind="stable").drop(columns="_order")
    out["level"] = out["level"].astype(str)
    return out


def _region_rates(table: pd.DataFrame, counts: pd.DataFrame) -> pd.DataFrame:
    means = table.groupby([*KEYS, "persona_id"], observed=True)["yes"].mean().rename("cell_yes").reset_index()
    placed = counts.assign(persona_id=counts["cell_id"].astype(str), population=counts["count"],
                           level=counts["state"].astype(str).map(REGION_OF_STATE))
    placed = placed[placed["level"].notna()]
    merged = means.merge(placed[["persona_id", "level", "population"]], on="persona_id")
    merged = merged.assign(_wy=merged["population"] * merged["cell_yes"])
    sums = merged.groupby([*KEYS, "level"], observed=True)[["population", "_wy"]].sum()
    sums = sums[sums["population"] > 0]
    out = pd.DataFrame({"rate": sums["_wy"] / sums["population"],
                        "population": sums["population"].astype(float)}).reset_index()
    out["_order"] = out["level"].map({region: i for i, region in enumerate(REGIONS)})
    return out.sort_values([*KEYS, "_order"], kind="stable").drop(columns="_order").assign(factor=REGION_FACTOR)


def decision_rates(table: pd.DataFrame, factors: list[str], counts: pd.DataFrame | None = None) -> pd.DataFrame:
    """The decision rate of every level of every factor and, with cell counts by state, of every Census
    region (module docstring).

    Parameters
    ----------
    table
        A decision table: ``persona_id``, ``model``, ``condition``, the factor columns, ``yes`` and
        optionally ``weight``.
    factors
        The factors to tabulate, in order.
    counts
        A cell run's counts per state (``cell_id``, ``state``, ``count``); absent: no region rows.

    Returns
    -------
    pandas.DataFrame
        ``model``, ``condition``, ``factor``, ``level``, ``rate``, ``population``.

    Examples
    --------
    >>> table = pd.DataFrame({"persona_id": ["a", "b"], "model": "m", "condition": "c", "sex": ["f", "m"],
    ...                       "yes": [1.0, 0.0]})
    >>> decision_rates(table, ["sex"])["rate"].tolist()
    [1.0, 0.0]
    """
    parts = [_factor_rates(table, factor) for factor in factors]
    if counts is not None and not counts.empty and {"cell_id", "state", "count"} <= set(counts.columns):
        regions = _region_rates(table, counts)
        if len(regions):
            parts.append(regions)
    columns = [*KEYS, "factor", "level", "rate", "population"]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)
