"""The reporting bank of the epidemic model: each cell's probability of testing and reporting, by scenario.

A decision bank answers, for a demographic cell and a scenario, how likely a symptomatic person is to
get tested and report. The epidemic model reads the two scenario factors that change during an
epidemic: the local case level (:data:`CASE_LEVELS`, from the current case count of the agent's region,
:func:`case_level_index`) and, optionally, what another household member did (:data:`HOUSEHOLD_LEVELS`).
Every other scenario factor (a news framing, a city context) is fixed for a run: select its rows
before building the bank.

The bank table has one row per cell x case level (x household level):

- ``cell_id``: the cell (:func:`pvsst.personas.cells.cell_id_of`), as in the population table;
- ``case_level``: one of :data:`CASE_LEVELS`;
- ``household`` (optional): one of :data:`HOUSEHOLD_LEVELS`; without it no decision depends on the
  household (every decision uses the independent bank);
- ``p_yes``: the probability of testing and reporting, in [0, 1] (a cell's yes-share, or its
  probability under logprobs or verbalized elicitation).

Examples
--------
>>> import pandas as pd
>>> table = pd.DataFrame({"cell_id": "c1", "case_level": list(CASE_LEVELS), "p_yes": [0.2, 0.3, 0.4, 0.5]})
>>> bank = ReportingBank.from_table(table, ["c1"])
>>> bank.probability(np.array([0, 0]), np.array([0, 3]), np.array([0, 0])).tolist()
[0.2, 0.5]
>>> case_level_index(np.array([0, 1, 9, 10, 100, 101])).tolist()
[0, 1, 1, 2, 2, 3]
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pvsst.core.errors import InputError

CASE_LEVELS: tuple[str, ...] = ("0", "<10", "10-100", ">100")
# Lower bounds of the case levels after 0: 1-9 cases is "<10", 10-100 is "10-100", 101 or more is ">100".
CASE_LEVEL_EDGES: tuple[int, ...] = (1, 10, 101)
HOUSEHOLD_LEVELS: tuple[str, ...] = ("none", "member_reported", "member_did_not_report")
NO_HOUSEHOLD, MEMBER_REPORTED, MEMBER_DID_NOT_REPORT = range(3)
BANK_COLUMNS = ("cell_id", "case_level", "household", "p_yes")


def case_level_index(counts, edges: tuple[int, ...] = CASE_LEVEL_EDGES) -> np.ndarray:
    """The :data:`CASE_LEVELS` index of each case count (``edges``: lower bounds of levels 1, 2, 3)."""
    return np.searchsorted(np.asarray(edges), np.asarray(counts), side="right").astype(np.int64)


@dataclass(frozen=True)
class ReportingBank:
    """Probabilities ``p[cell, case level, household level]``; ``cells`` lists the cell ids in axis order.

    ``chained`` says whether the bank has household levels (else the household axis has one level).
    """

    cells: tuple[str, ...]
    p: np.ndarray
    chained: bool

    @classmethod
    def from_table(cls, table: pd.DataFrame, cells, source: str = "bank") -> "ReportingBank":
        """Build the bank for the population's ``cells`` from a bank table (module docstring).

        A missing column, a probability outside [0, 1], a repeated row, an unknown level, or a cell of
        the population without a row for every level is an :class:`InputError` naming the first one.
        """
        for column in ("cell_id", "case_level", "p_yes"):
            if column not in table.columns:
                raise InputError(source, column, "missing column of the reporting bank")
        cells = tuple(str(c) for c in pd.unique(pd.Series(list(cells), dtype=object)))
        chained = "household" in table.columns
        household = table["household"].astype(str) if chained else pd.Series("none", index=table.index)
        levels = HOUSEHOLD_LEVELS if chained else HOUSEHOLD_LEVELS[:1]
        p_yes = pd.to_numeric(table["p_yes"], errors="coerce")
        if p_yes.isna().any() or ((p_yes < 0) | (p_yes > 1)).any():
            raise InputError(source, "p_yes", "every p_yes must be a probability in [0, 1]")
        frame = pd.DataFrame({"cell_id": table["cell_id"].astype(str), "case_level": table["case_level"].astype(str),
                              "household": household, "p_yes": p_yes.astype(float)})
        for column, allowed in (("case_level", CASE_LEVELS), ("household", levels)):
            unknown = sorted(set(frame[column]) - set(allowed))
            if unknown:
                raise InputError(source, column, f"unknown level {unknown[0]!r} (levels: {', '.join(allowed)})")
        repeated = frame.duplicated(["cell_id", "case_level", "household"])
        if repeated.any():
            row = frame[repeated].iloc[0]
            raise InputError(source, "cell_id", f"two rows for cell {row['cell_id']}, case level {row['case_level']}, "
                                                f"household {row['household']}")
        p = np.full((len(cells), len(CASE_LEVELS), len(levels)), np.nan)
        cell_index = pd.Index(cells).get_indexer(frame["cell_id"])
        keep = cell_index >= 0
        p[cell_index[keep], pd.Index(CASE_LEVELS).get_indexer(frame["case_level"][keep]),
          pd.Index(levels).get_indexer(frame["household"][keep])] = frame["p_yes"].to_numpy()[keep]
        if np.isnan(p).any():
            c, k, h = np.argwhere(np.isnan(p))[0]
            raise InputError(source, "cell_id", f"no row for cell {cells[c]} at case level {CASE_LEVELS[k]!r}"
                             + (f", household {levels[h]!r}" if chained else ""))
        p.setflags(write=False)
        return cls(cells=cells, p=p, chained=chained)

    def probability(self, cell: np.ndarray, case_level: np.ndarray, household: np.ndarray) -> np.ndarray:
        """P(yes) of each decision (integer cell, case level and household level indices)."""
        household = np.asarray(household) if self.chained else np.zeros_like(np.asarray(household))
        return self.p[np.asarray(cell), np.asarray(case_level), household]
