"""Integerisation of a fitted table: truncate, replicate, then ordered systematic sampling.

Each cell first gets the integer part of its expected count (truncate, replicate: Lovelace and Ballas,
2013, "'Truncate, replicate, sample'", Computers, Environment and Urban Systems 41). The units left
over go to cells chosen by systematic probability-proportional-to-size sampling on the fractional
parts (Madow, 1949, "On the theory of systematic sampling, II", Ann. Math. Statist. 20): with a
random start u in [0, 1), the cells whose cumulative fractional mass crosses u, u + 1, u + 2, ... are
chosen. Every cell is then chosen with probability exactly equal to its fractional part (weighted
sampling without replacement, the "sample" of plain TRS, is biased against cells with large fractions),
and any run of consecutive cells receives its expected count to within one unit.

The cells are ordered by ``strata`` (random order within a stratum), so each stratum, and each group
of strata, gets its expected count to within one unit per stratum: a margin used as the stratum key
is met almost exactly instead of with multinomial noise.

Example
-------
>>> import numpy as np
>>> counts = integerise(np.array([0.5, 1.5, 2.0]), 4, np.random.default_rng(0))
>>> int(counts.sum()), int(counts[2])
(4, 2)
"""
from __future__ import annotations

import numpy as np


def integerise(weights: np.ndarray, total: int, rng: np.random.Generator,
               strata: np.ndarray | None = None) -> np.ndarray:
    """Integer counts summing to ``total`` whose expectation is ``weights`` scaled to ``total``.

    ``strata`` (optional, one integer per cell) orders the systematic draw; see the module docstring.
    """
    weights = np.asarray(weights, dtype=float)
    expected = weights * (total / weights.sum())
    counts = np.floor(expected).astype(np.int64)
    remaining = int(total - counts.sum())
    if remaining <= 0:
        return counts
    fraction = expected - counts
    tiebreak = rng.random(fraction.size)
    order = np.lexsort((tiebreak, strata)) if strata is not None else np.argsort(tiebreak)
    cumulative = np.cumsum(fraction[order])
    cumulative *= remaining / cumulative[-1]          # remove float drift: the fractions sum to `remaining`
    points = rng.random() + np.arange(remaining)
    chosen = order[np.searchsorted(cumulative, points, side="right")]
    np.add.at(counts, chosen, 1)
    return counts
