"""A survey population answered through its cells: the cells asked, their counts, unit-level answers.

With an instrument's ``cells`` section (:mod:`pvsst.experiments.survey.cells_section`) the population
(``personas``: census personas of any size, or respondent-matched ones) is grouped into its cells
(:func:`pvsst.personas.cells.cell_table`) and the personas asked are the cells: one row per distinct
cell, ``persona_id`` = ``cell_id``, printed by the cell card. Every member of a cell would receive the
identical request, so the cell's answer distribution is each member's and the run costs one call per
cell x question (``logprobs``, ``verbalized``) or ``cells.k`` per cell x question (``sample``),
whatever the population's size.

- :func:`asked_cells`: the cells asked (the rows of ``RUN/personas.parquet``): ``persona_id`` and
  ``cell_id`` (the same id), the cell attributes, ``population`` (the cell's personas) and ``weight``
  (= ``population``: the cell stands for that many people when answers are pooled), ``card`` (the cell
  card).
- :func:`cell_counts`: the rows of ``RUN/cells.parquet``: ``cell_id``, the cell attributes,
  ``geography`` (the state's postal code; ``US`` for personas without a state) and ``population``
  (personas of that cell in that geography). The census counts of post-stratification.
- :func:`unit_answers`: when unit-level answers are needed, each persona's answer drawn from its
  cell's distribution with a seeded generator (the expected distribution is what estimates use).
- :func:`geography_codes`: the real survey's state column (``data.geography``) as postal codes.

Examples
--------
>>> import pandas as pd
>>> people = pd.DataFrame({"persona_id": ["a", "b", "c"], "sex": ["female", "male", "female"],
...                        "state": ["OH", "OH", "TX"]})
>>> asked, counts = asked_cells(people, ["sex"])
>>> asked[["sex", "population"]].values.tolist()
[['female', 2], ['male', 1]]
>>> counts[["sex", "geography", "population"]].values.tolist()
[['female', 'OH', 1], ['female', 'TX', 1], ['male', 'OH', 1]]
"""
from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from pvsst.core.errors import InputError
from pvsst.core.run_layout import CELLS
from pvsst.personas.cell_cards import cell_cards
from pvsst.personas.cells import cell_table
from pvsst.personas.geography import STATE_CODE_OF_NAME, STATE_CODES
from pvsst.personas.vocabulary import college_of

CELLS_FILE = CELLS
NATIONAL = "US"
GEOGRAPHY = "geography"
CELL_CARD = "card"
CELL_COUNT_COLUMNS = ("cell_id", GEOGRAPHY, "population")


def _geography(population: pd.DataFrame) -> pd.Series:
    """The state of every persona; ``US`` where the population has no state."""
    if "state" not in population.columns:
        return pd.Series(NATIONAL, index=population.index, dtype=object)
    state = population["state"]
    if isinstance(state.dtype, pd.CategoricalDtype) and not state.isna().any():
        return state
    return state.astype(object).where(state.notna(), NATIONAL)


def asked_cells(population: pd.DataFrame, attributes, card_version: int | None = None,
                source: str = "personas") -> tuple[pd.DataFrame, pd.DataFrame]:
    """The cells asked (one row per cell) and the cell counts per geography (see the module docstring).

    Raises :class:`InputError` for an attribute the population lacks or leaves empty for some persona.
    """
    attributes = list(attributes)
    slim = pd.DataFrame({"persona_id": population["persona_id"].to_numpy()}, index=population.index)
    for attribute in attributes:
        if attribute == "college" and attribute not in population.columns and "education" in population.columns:
            slim[attribute] = college_of(population["education"])  # derived: bachelor's or more vs not
            continue
        if attribute not in population.columns:
            raise InputError(source, "cells.attributes", f"the population lacks cell attribute {attribute!r}")
        slim[attribute] = population[attribute]
    slim[GEOGRAPHY] = _geography(population)
    table = cell_table(slim, attributes, geography=GEOGRAPHY, source=source)
    cells = table.cells
    asked = pd.DataFrame({"persona_id": cells["cell_id"].to_numpy(), "cell_id": cells["cell_id"].to_numpy()})
    for attribute in attributes:
        asked[attribute] = cells[attribute].astype(str).to_numpy()
    asked["population"] = cells["count"].to_numpy(dtype=np.int64)
    asked["weight"] = asked["population"].astype(float)
    asked[CELL_CARD] = cell_cards(table, card_version)["card"].to_numpy()
    counts = table.counts.assign(cell_id=table.counts["cell_id"].astype(str)).merge(
        asked[["cell_id", *attributes]], on="cell_id", how="left")
    counts = counts.rename(columns={"count": "population"})
    counts[GEOGRAPHY] = counts[GEOGRAPHY].astype(str)
    counts["population"] = counts["population"].astype(np.int64)
    return asked, counts[["cell_id", *attributes, GEOGRAPHY, "population"]].reset_index(drop=True)


def unit_answers(persona_cells, distributions: pd.DataFrame, seed: int, label: str = "") -> np.ndarray:
    """Each persona's answer, drawn from its cell's distribution (a seeded, vectorised inverse-CDF draw).

    Parameters
    ----------
    persona_cells
        The cell id of every persona (e.g. a :class:`pvsst.personas.cells.CellTable`'s ``persona_cell``
        ``cell_id``).
    distributions
        One row per cell (index: cell id), one column per option code, rows summing to 1.
    seed, label
        The generator is ``default_rng([seed, hash(label)])``: the same seed and label (e.g. the
        model, condition and question) give the same answers; another label another stream.

    Examples
    --------
    >>> p = pd.DataFrame({"yes": [1.0, 0.25], "no": [0.0, 0.75]}, index=["a", "b"])
    >>> answers = unit_answers(["a"] * 3 + ["b"] * 40_000, p, seed=1, label="q")
    >>> answers[:3].tolist(), round(float((answers[3:] == "no").mean()), 2)
    (['yes', 'yes', 'yes'], 0.75)
    """
    probabilities = distributions.to_numpy(dtype=float)
    if np.isnan(probabilities).any() or (probabilities < 0).any():
        raise InputError("answers", "probabilities", "a cell's distribution holds a negative or missing value")
    totals = probabilities.sum(axis=1)
    if not np.allclose(totals, 1.0, atol=1e-9):
        raise InputError("answers", "probabilities", "every cell's distribution must sum to 1")
    index = distributions.index.astype(str).get_indexer(pd.Index(np.asarray(persona_cells, dtype=str)))
    if (index < 0).any():
        missing = str(np.asarray(persona_cells, dtype=str)[int(np.argmax(index < 0))])
        raise InputError("answers", "cell_id", f"cell {missing!r} has personas but no distribution")
    cumulative = np.cumsum(probabilities, axis=1)
    cumulative[:, -1] = np.inf  # rounding can leave the last sum just under 1
    digest = int.from_bytes(hashlib.sha256(label.encode("utf-8")).digest()[:8], "little")
    draws = np.random.default_rng([int(seed), digest]).random(len(index))
    chosen = (draws[:, None] >= cumulative[index]).sum(axis=1)
    return np.asarray(distributions.columns, dtype=object)[chosen]


_CODE = {**{c: c for c in STATE_CODES}, **STATE_CODE_OF_NAME}


def geography_codes(column: pd.Series, source: str, name: str) -> list[str | None]:
    """A survey's state column as postal codes (codes or full names, any case; missing stays ``None``).

    Examples
    --------
    >>> geography_codes(pd.Series(["Ohio", "tx", None]), "survey", "state")
    ['OH', 'TX', None]
    """
    lookup = {k.lower(): v for k, v in _CODE.items()}
    out = []
    for value in column.astype(object):
        if value is None or (isinstance(value, float) and np.isnan(value)):
            out.append(None)
            continue
        code = lookup.get(str(value).strip().lower())
        if code is None:
            raise InputError(source, "data.geography", f"column {name!r} holds {value!r}, not a U.S. state "
                             "(postal codes or names of the 50 states and DC)")
        out.append(code)
    return out
