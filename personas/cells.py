"""Population cells: the personas that share every value of a list of cell attributes.

A *cell* is one combination of values of the cell attributes (for example age band x sex x party x
region). When a persona's prompt depends only on its cell's attributes (:mod:`pvsst.personas.cell_cards`),
every member of a cell receives the identical request, so the cell's answer distribution *is* each
member's: a population is answered with one request per cell instead of one per person.

:func:`cell_table` groups a persona table into its cells and returns a :class:`CellTable`:

- ``cells``: one row per cell (``cell_id``, the attribute values, ``count``: the population of the
  cell), ordered by the attribute values (category order for categorical columns);
- ``counts``: the population count of every cell in every geography (``cell_id``, the geography
  column, ``count``; only non-zero counts), the ``N_gc`` of post-stratification;
- ``persona_cell``: the cell of every persona (``persona_id``, ``cell_id``), in the table's row order.

``count`` is a number of personas, or the sum of their weights when a weight column is named (a
survey's respondents used as the population).

A cell id is derived from the attribute names and values alone (:func:`cell_id_of`): ``c`` and the
first 16 hex digits of the SHA-256 of their canonical JSON, so the same cell has the same id in every
population, run and survey table, whatever other cells exist.

Examples
--------
>>> import pandas as pd
>>> people = pd.DataFrame({"persona_id": ["p1", "p2", "p3"], "sex": ["female", "male", "female"],
...                        "party": ["Democrat", "Democrat", "Democrat"], "state": ["OH", "OH", "TX"]})
>>> table = cell_table(people, ["sex", "party"])
>>> table.cells[["sex", "party", "count"]].values.tolist()
[['female', 'Democrat', 2], ['male', 'Democrat', 1]]
>>> table.counts[["state", "count"]].values.tolist()
[['OH', 1], ['TX', 1], ['OH', 1]]
>>> table.persona_cell["cell_id"].tolist() == [table.cells["cell_id"][i] for i in (0, 1, 0)]
True
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pvsst.core.errors import InputError
from pvsst.core.validation import checked_weights

DEFAULT_GEOGRAPHY = "state"
CELL_ID_DIGITS = 16


@dataclass(frozen=True)
class CellTable:
    """The cells of a population (see the module docstring for the three tables)."""

    attributes: tuple[str, ...]
    geography: str
    cells: pd.DataFrame
    counts: pd.DataFrame
    persona_cell: pd.DataFrame
    weight: str | None = None

    @property
    def n_cells(self) -> int:
        return len(self.cells)

    def count_matrix(self) -> pd.DataFrame:
        """Population counts as a (cell x geography) table, cells in ``cells`` order, zeros filled.

        Examples
        --------
        >>> people = pd.DataFrame({"persona_id": ["a", "b", "c"], "sex": ["f", "m", "f"],
        ...                        "state": ["OH", "OH", "TX"]})
        >>> cell_table(people, ["sex"]).count_matrix().values.tolist()
        [[1, 1], [1, 0]]
        """
        wide = self.counts.pivot(index="cell_id", columns=self.geography, values="count")
        return wide.reindex(self.cells["cell_id"]).fillna(0).astype(self.counts["count"].dtype)


def cell_id_of(values: dict) -> str:
    """The stable id of the cell with these ``{attribute: value}`` pairs (order of the dict matters).

    Values are compared as strings, so a cell read back from CSV keeps its id.

    Examples
    --------
    >>> cell_id_of({"sex": "female", "party": "Democrat"})
    'cbd669daebd5753b2'
    >>> cell_id_of({"sex": "female", "party": "Democrat"}) == cell_id_of({"party": "Democrat", "sex": "female"})
    False
    """
    canonical = json.dumps([[str(k), str(v)] for k, v in values.items()], separators=(",", ":"))
    return "c" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:CELL_ID_DIGITS]


def check_cell_attributes(columns, attributes, source: str = "personas", field: str = "cells") -> tuple[str, ...]:
    """The cell attributes as a tuple, or :class:`InputError` naming the first one ``columns`` lacks.

    Examples
    --------
    >>> check_cell_attributes(["sex", "party"], ["party"])
    ('party',)
    >>> check_cell_attributes(["sex", "party"], ["sex", "partyy"])
    Traceback (most recent call last):
    ...
    pvsst.core.errors.InputError: personas: cells: unknown cell attribute 'partyy' (columns: sex, party)
    """
    if isinstance(attributes, str):
        attributes = [attributes]
    attributes = tuple(str(a) for a in attributes)
    if not attributes:
        raise InputError(source, field, "no cell attribute given")
    columns = [str(c) for c in columns]
    for attribute in attributes:
        if attribute not in columns:
            raise InputError(source, field, f"unknown cell attribute {attribute!r} (columns: {', '.join(columns)})")
    repeated = sorted({a for a in attributes if attributes.count(a) > 1})
    if repeated:
        raise InputError(source, field, f"cell attribute {repeated[0]!r} listed twice")
    return attributes


def _codes(column: pd.Series, name: str, source: str) -> tuple[np.ndarray, list]:
    """Integer codes (category order, else sorted values) and the levels of one attribute column."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy()
        levels = list(column.cat.categories)
    else:
        codes, uniques = pd.factorize(column, sort=True)
        levels = list(uniques)
    missing = int((codes < 0).sum())
    if missing:
        raise InputError(source, name, f"{missing:,} persona(s) have no value for this cell attribute")
    return codes.astype(np.int64), levels


def cell_codes(frame: pd.DataFrame, attributes, source: str = "personas") -> tuple[np.ndarray, pd.DataFrame]:
    """The cell index of every row (0..C-1) and the cells' attribute values (C rows, in cell order).

    Cells are ordered by the attribute values (lexicographically over ``attributes``); only cells with
    at least one row exist. Linear in the rows: one integer key per row, then ``np.unique``.

    Examples
    --------
    >>> frame = pd.DataFrame({"sex": ["m", "f", "m"], "age": [30, 30, 40]})
    >>> index, cells = cell_codes(frame, ["sex", "age"])
    >>> index.tolist(), cells.values.tolist()
    ([1, 0, 2], [['f', 30], ['m', 30], ['m', 40]])
    """
    attributes = check_cell_attributes(frame.columns, attributes, source)
    key = np.zeros(len(frame), dtype=np.int64)
    all_levels = []
    for attribute in attributes:
        codes, levels = _codes(frame[attribute], attribute, source)
        key = key * len(levels) + codes
        all_levels.append(levels)
    if np.prod([float(len(levels)) for levels in all_levels]) >= 2 ** 62:
        raise InputError(source, "cells", "too many attribute combinations for one cell key")
    space = int(np.prod([len(levels) for levels in all_levels]))
    if space <= max(2 ** 20, 2 * len(key)):
        # Dense key space (the usual case): a linear pass instead of a sort.
        present = np.bincount(key, minlength=space) > 0
        unique_keys = np.flatnonzero(present)
        index = (np.cumsum(present) - 1)[key]
    else:
        unique_keys, index = np.unique(key, return_inverse=True)
    values = {}
    rest = unique_keys
    for attribute, levels in reversed(list(zip(attributes, all_levels))):
        rest, code = np.divmod(rest, len(levels))
        values[attribute] = np.asarray(levels, dtype=object)[code]
    # Categorical columns keep the levels' order (group estimates and figures list levels in it).
    cells = pd.DataFrame({a: pd.Categorical(values[a], categories=levels)
                          for a, levels in zip(attributes, all_levels)})
    return index.astype(np.int64), cells


def row_cell_ids(frame: pd.DataFrame, attributes, source: str = "personas") -> np.ndarray:
    """Every row's cell id (:func:`cell_id_of` over ``attributes``), one id computed per distinct cell.

    Examples
    --------
    >>> frame = pd.DataFrame({"sex": ["m", "f", "m"]})
    >>> ids = row_cell_ids(frame, ["sex"])
    >>> ids[0] == ids[2] == cell_id_of({"sex": "m"}), ids[1] == cell_id_of({"sex": "f"})
    (True, True)
    """
    index, cells = cell_codes(frame, attributes, source)
    names = list(cells.columns)
    ids = np.asarray([cell_id_of(dict(zip(names, values))) for values in cells.itertuples(index=False, name=None)])
    return ids[index]


def cell_table(personas: pd.DataFrame, attributes, geography: str = DEFAULT_GEOGRAPHY,
               weight: str | None = None, source: str = "personas") -> CellTable:
    """Group a persona table into the cells of ``attributes`` (see the module docstring).

    Parameters
    ----------
    personas
        One row per persona with a ``persona_id`` column (:func:`pvsst.personas.synthesis.synthesize`, a
        table read by :func:`pvsst.personas.records.read_personas`, or a survey's respondents).
    attributes
        The cell attributes, in the order the cell's card prints them.
    geography
        The column whose levels get their own population counts (default ``state``).
    weight
        Optional column of non-negative weights: counts become weight sums.

    Raises
    ------
    InputError
        One line naming the field, for an unknown attribute or geography column, a missing value, or
        a bad weight.

    Examples
    --------
    >>> from pvsst.personas.synthesis import synthesize
    >>> people = synthesize(2000, geography="CA,NV", seed=1).personas
    >>> table = cell_table(people, ["sex", "region"])
    >>> table.cells[["sex", "region", "count"]].values.tolist()
    [['male', 'West', 994], ['female', 'West', 1006]]
    >>> int(table.counts["count"].sum()), sorted(table.counts["state"].unique())
    (2000, ['CA', 'NV'])
    """
    attributes = check_cell_attributes(personas.columns, attributes, source)
    for column, field in (("persona_id", "persona_id"), (geography, "geography")):
        if column not in personas.columns:
            raise InputError(source, field, f"no column {column!r} in the persona table")
    index, cells = cell_codes(personas, attributes, source)
    geo_codes, geo_levels = _codes(personas[geography], geography, source)
    if weight is None:
        mass = None
    else:
        if weight not in personas.columns:
            raise InputError(source, "weight", f"no column {weight!r} in the persona table")
        mass = checked_weights(personas[weight], source, "weight", weight)
    ids = np.array([cell_id_of(dict(zip(attributes, row))) for row in cells.itertuples(index=False, name=None)])
    if len(set(ids)) != len(ids):
        raise InputError(source, "cells", "two cells share an id (hash collision); rename a level")
    n_cells, n_geo = len(cells), len(geo_levels)
    joint = np.bincount(index * n_geo + geo_codes, weights=mass, minlength=n_cells * n_geo).reshape(n_cells, n_geo)
    if mass is None:
        joint = joint.astype(np.int64)
    cell_index, geo_index = np.nonzero(joint)
    categories = pd.CategoricalDtype(ids)
    counts = pd.DataFrame({"cell_id": pd.Categorical.from_codes(cell_index, dtype=categories),
                           geography: np.asarray(geo_levels, dtype=object)[geo_index],
                           "count": joint[cell_index, geo_index]})
    cells.insert(0, "cell_id", ids)
    cells["count"] = joint.sum(axis=1)
    persona_cell = pd.DataFrame({"persona_id": personas["persona_id"].reset_index(drop=True),
                                 "cell_id": pd.Categorical.from_codes(index, dtype=categories)})
    return CellTable(attributes=attributes, geography=geography, cells=cells, counts=counts,
                     persona_cell=persona_cell, weight=weight)
