"""The population of a cell run: its cells, their attributes and their counts per geography (``RUN/cells.parquet``).

In a cell run every persona of a demographic cell gets the identical prompt, and each cell's answers stand
for all its members. ``cells.parquet`` holds one row per cell x geography: ``cell_id``, the cell
attributes, ``geography`` (a state code, or ``US`` for a national count) and ``population`` (the personas
of the cell there). :func:`population_from_table` checks it and turns it into the cell table and the
``N_gc`` counts of :mod:`pvsst.analysis.survey.cells.poststratification`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pvsst.analysis.stats.paired import require_columns
from pvsst.core.errors import InputError
from pvsst.core.run_layout import CELLS

CELLS_FILE = CELLS
NATIONAL = "US"


@dataclass(frozen=True)
class CellPopulation:
    """The cells of a cell run: ``cells`` (cell_id, attributes, count) and ``counts`` (cell_id, state, count)."""

    attributes: tuple[str, ...]
    cells: pd.DataFrame
    counts: pd.DataFrame

    def weights(self) -> pd.Series:
        """Each cell's population (all geographies), indexed by cell id."""
        return self.cells.set_index("cell_id")["count"]


def is_cell_run(run_dir: str | Path) -> bool:
    """Whether a survey run was answered cell by cell (it has ``cells.parquet``)."""
    return (Path(run_dir) / CELLS_FILE).is_file()


def population_from_table(frame: pd.DataFrame, source: str = CELLS_FILE) -> CellPopulation:
    """A :class:`CellPopulation` from a ``cells.parquet`` table (see the module docstring).

    National rows (``US``) beside state rows are totals: they must equal the cell's sum over its states
    and are dropped; a table of national rows only estimates the nation.

    Examples
    --------
    >>> frame = pd.DataFrame({"cell_id": ["a", "a", "b", "a", "b"], "sex": ["f", "f", "m", "f", "m"],
    ...                       "geography": ["OH", "TX", "OH", "US", "US"], "population": [3, 2, 1, 5, 1]})
    >>> population = population_from_table(frame)
    >>> population.counts.values.tolist(), population.cells["count"].tolist()
    ([['a', 'OH', 3], ['a', 'TX', 2], ['b', 'OH', 1]], [5, 1])
    """
    require_columns(frame, ("cell_id", "geography", "population"), source)
    attributes = tuple(c for c in frame.columns if c not in ("cell_id", "geography", "population"))
    if not attributes:
        raise InputError(source, "cells", "no cell attribute column")
    population = pd.to_numeric(frame["population"], errors="coerce")
    if population.isna().any() or (population < 0).any():
        raise InputError(source, "population", "must hold non-negative counts")
    frame = frame.assign(cell_id=frame["cell_id"].astype(str), geography=frame["geography"].astype(str),
                         population=population)
    national = frame["geography"] == NATIONAL
    if national.any() and not national.all():
        totals = frame[national].groupby("cell_id")["population"].sum()
        sums = frame[~national].groupby("cell_id")["population"].sum().reindex(totals.index).fillna(0)
        if not np.allclose(totals.to_numpy(float), sums.to_numpy(float)):
            raise InputError(source, "population", "a cell's US count differs from the sum of its state counts")
        frame = frame[~national]
    definitions = frame.drop_duplicates(["cell_id", *attributes])
    if definitions["cell_id"].duplicated().any():
        raise InputError(
            source,
            "cell_id",
            f"cell {definitions['cell_id'][definitions['cell_id'].duplicated()].iloc[0]!r} "
            "has two sets of attribute values",
        )
    frame = frame[frame["population"] > 0]
    counts = frame.groupby(["cell_id", "geography"], sort=False, as_index=False)["population"].sum()
    counts = counts.rename(columns={"geography": "state", "population": "count"})
    cells = definitions[["cell_id", *attributes]].reset_index(drop=True)
    cells["count"] = cells["cell_id"].map(counts.groupby("cell_id")["count"].sum()).fillna(0)
    return CellPopulation(attributes, cells, counts.reset_index(drop=True))
