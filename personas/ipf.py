"""Iterative proportional fitting (raking) of a table to a set of marginal totals.

Each margin is a grouping of the table's cells (an integer group per cell, ``-1`` for cells the margin
does not constrain, e.g. adults under 25 for an education target of adults 25+) with a target total
per group. One IPF sweep scales the cells of every group so its sum equals its target, margin by
margin (Deming and Stephan, 1940, "On a least squares adjustment of a sampled frequency table when the
expected marginal totals are known", Ann. Math. Statist. 11(4)); sweeps repeat until the largest
relative margin error is below ``tolerance``. The fit keeps the seed's odds ratios that the margins do
not fix (it is the minimum-discrimination-information table with those margins).

Example
-------
>>> import numpy as np
>>> seed = np.ones(4)                       # a 2 x 2 table, flattened
>>> rows = RakingMargin("rows", np.array([0, 0, 1, 1]), np.array([30.0, 70.0]))
>>> cols = RakingMargin("cols", np.array([0, 1, 0, 1]), np.array([40.0, 60.0]))
>>> fit = rake(seed, [rows, cols])
>>> np.round(fit.table, 6).tolist(), fit.converged
([12.0, 18.0, 28.0, 42.0], True)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pvsst.core.errors import InputError


@dataclass(frozen=True)
class RakingMargin:
    """A target: ``groups[i]`` is the group of cell ``i`` (``-1``: unconstrained), ``targets[g]`` its total."""

    name: str
    groups: np.ndarray
    targets: np.ndarray


@dataclass(frozen=True)
class RakingFit:
    """The raked table, the sweeps used, and the largest relative margin error left."""

    table: np.ndarray
    iterations: int
    max_relative_error: float
    converged: bool


def _group_sums(table: np.ndarray, margin: RakingMargin) -> np.ndarray:
    inside = margin.groups >= 0
    return np.bincount(margin.groups[inside], weights=table[inside], minlength=len(margin.targets))


def rake(seed: np.ndarray, margins: list[RakingMargin], tolerance: float = 1e-10,
         max_iterations: int = 1000) -> RakingFit:
    """Rake a flattened, non-negative ``seed`` table to ``margins`` (see the module docstring).

    A group with a positive target but no seed mass cannot be reached and raises
    :class:`pvsst.core.errors.InputError`.
    """
    table = np.asarray(seed, dtype=float).copy()
    for margin in margins:
        reached = _group_sums(table, margin)
        unreachable = np.flatnonzero((margin.targets > 0) & (reached <= 0))
        if unreachable.size:
            raise InputError("raking", margin.name, f"group {int(unreachable[0])} has a target but no seed mass")
    error = np.inf
    for iteration in range(1, max_iterations + 1):
        for margin in margins:
            sums = _group_sums(table, margin)
            factor = np.divide(margin.targets, sums, out=np.zeros_like(sums), where=sums > 0)
            inside = margin.groups >= 0
            table[inside] *= factor[margin.groups[inside]]
        error = max(float(np.max(np.abs(_group_sums(table, m) - m.targets) / np.maximum(m.targets, 1e-300)))
                    for m in margins)
        if error < tolerance:
            return RakingFit(table, iteration, error, True)
    return RakingFit(table, max_iterations, error, False)
