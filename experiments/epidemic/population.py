"""The agents of an epidemic run: the bank run's census population, cell by cell and state by state.

A cell run's ``cells.parquet`` counts the personas of each cell in each state (``geography``).
:func:`epidemic_population` makes ``round(population x agents_per_persona)`` agents of every row (one
agent per persona by default), places each in its region (the state, its Census region, or one
national region) and, when the spec gives a household size distribution, groups the agents of each
region into households (:func:`pvsst.personas.households.assign_households`: members share the
region; the draws come from the generator given, itself from the master seed). When the cells carry a
household attribute (:data:`SHARED_BY_HOUSEHOLD`: the household income band of a scenario
instrument's cells), households form within region x that attribute, so members share it too.
Without households every agent lives alone.

Columns: ``agent`` (0..n-1), ``cell_id``, ``state``, ``region``, the shared household attributes the
cells carry and, with households, ``household_id``, ``household_size``, ``household_member``.

Examples
--------
>>> from pvsst.experiments.spec.epidemic_study import PopulationSpec
>>> cells = pd.DataFrame({"cell_id": ["a", "a", "b"], "geography": ["OH", "TX", "TX"], "population": [2, 3, 1]})
>>> people = epidemic_population(cells, PopulationSpec(region="census_region"), np.random.default_rng(0))
>>> people.groupby("region")["cell_id"].value_counts().to_dict()
{('Midwest', 'a'): 2, ('South', 'a'): 3, ('South', 'b'): 1}
>>> from pvsst.experiments.spec.epidemic_study import HouseholdSizeSpec
>>> banded = cells.assign(household_income_band=["under $70,000", "under $70,000", "$70,000 or more"])
>>> homes = PopulationSpec(region="census_region", households=HouseholdSizeSpec(shares=[0, 1], source="pairs"))
>>> people = epidemic_population(banded, homes, np.random.default_rng(0))
>>> int(people.groupby("household_id")["household_income_band"].nunique().max())
1
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.core.errors import InputError
from pvsst.experiments.spec.epidemic_study import PopulationSpec
from pvsst.personas.geography import REGION_OF_STATE
from pvsst.personas.households import HouseholdSizes, assign_households

NATIONAL = "US"
SHARED_BY_HOUSEHOLD = ("household_income_band",)
"""Cell attributes every member of a household shares, when the bank run's cells carry them."""


def _regions(states: pd.Series, kind: str) -> pd.Series:
    if kind == "state":
        return states
    if kind == "national":
        return pd.Series(NATIONAL, index=states.index, dtype=object)
    unknown = sorted(set(states) - set(REGION_OF_STATE))
    if unknown:
        raise InputError("population", "region", f"geography {unknown[0]!r} has no Census region (the bank run's "
                                                  "personas need a state; use region: national)")
    return states.map(REGION_OF_STATE)


def epidemic_population(cells: pd.DataFrame, spec: PopulationSpec, rng: np.random.Generator) -> pd.DataFrame:
    """The epidemic's agents from a cell run's cell counts (module docstring).

    Parameters
    ----------
    cells
        ``cell_id``, ``geography`` (a state code, or ``US``) and ``population`` per row.
    spec
        The spec's ``population`` section.
    rng
        The generator of the household draws.

    Returns
    -------
    pandas.DataFrame
        One row per agent, in cell-table order.
    """
    for column in ("cell_id", "geography", "population"):
        if column not in cells.columns:
            raise InputError("population", column, "missing column of the bank run's cells.parquet")
    counts = np.rint(cells["population"].to_numpy(dtype=float) * spec.agents_per_persona).astype(np.int64)
    if counts.sum() < 1:
        raise InputError("population", "agents_per_persona", "the population has no agent at this scale")
    rows = np.repeat(np.arange(len(cells)), counts)
    states = pd.Series(cells["geography"].astype(str).to_numpy()[rows], dtype=object)
    people = pd.DataFrame({"agent": np.arange(rows.size), "cell_id": cells["cell_id"].astype(str).to_numpy()[rows],
                           "state": states, "region": _regions(states, spec.region).to_numpy()})
    shared = [c for c in SHARED_BY_HOUSEHOLD if c in cells.columns]
    for column in shared:
        people[column] = cells[column].astype(str).to_numpy()[rows]
    if spec.households is not None:
        sizes = HouseholdSizes(shares=tuple(spec.households.shares), source=spec.households.source)
        within = people[["region", *shared]].astype(str).agg("|".join, axis=1) if shared else people["region"]
        people = people.join(assign_households(people.assign(_within=within), sizes, rng, within="_within"))
    return people
