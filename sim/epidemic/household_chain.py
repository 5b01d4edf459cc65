"""Household chaining of decisions: the first member decides alone, every other member given that decision.

A household vignette ("another member of your household had the same symptoms and reported / did not
report") gives each cell two conditional probabilities besides its independent one. Chaining draws a
household's decisions from them: the first member (``household_member == 0``) draws from the
independent bank, P(yes) = ``p_alone``; every other member draws, independently given the first
member's decision, from ``p_after_yes`` (the first member reported) or ``p_after_no`` (it did not).
The exact within-household agreement and correlation this produces are computed by
:func:`pvsst.analysis.scenarios.household_agreement.expected_household_agreement`.

Examples
--------
>>> households = np.array([0, 0, 0, 1, 1])
>>> members = np.array([0, 1, 2, 0, 1])
>>> decided = chain_household_decisions(households, members, np.full(5, 0.5), np.ones(5), np.zeros(5),
...                                     np.random.default_rng(3))
>>> bool(decided[:3].min() == decided[:3].max()) and bool(decided[3] == decided[4])
True
"""
from __future__ import annotations

import numpy as np

from pvsst.core.errors import InputError


def chain_household_decisions(household: np.ndarray, member: np.ndarray, p_alone: np.ndarray,
                              p_after_yes: np.ndarray, p_after_no: np.ndarray,
                              rng: np.random.Generator) -> np.ndarray:
    """Each person's decision (bool), chained within households (module docstring).

    Parameters
    ----------
    household
        Integer household index of each person.
    member
        Position within the household; exactly one member 0 per household.
    p_alone, p_after_yes, p_after_no
        Each person's P(yes) alone, after a first member who reported, after one who did not.
    rng
        The generator of every draw (one uniform per person, in person order).
    """
    household = np.asarray(household, dtype=np.int64)
    member = np.asarray(member)
    first = member == 0
    firsts = np.bincount(household[first], minlength=household.max(initial=-1) + 1)
    if (firsts[np.unique(household)] != 1).any():
        raise InputError("households", "household_member", "every household needs exactly one member 0")
    draws = rng.random(household.size)
    first_yes = np.zeros(household.max(initial=-1) + 1, dtype=bool)
    first_yes[household[first]] = draws[first] < np.asarray(p_alone)[first]
    conditional = np.where(first_yes[household], p_after_yes, p_after_no)
    return np.where(first, draws < p_alone, draws < conditional)
