"""Matched sets for counterfactual audits: personas identical but for the varied attribute(s).

A matched set holds one persona per level (group) of the varied attribute(s), every other attribute
and the seed equal, so a difference in answers within the set can only come from the varied attribute
(AgentFairBench, arXiv 2606.16723). Two ways to get them:

- :func:`counterfactual_personas` builds them: every base persona copied once per level combination,
  with the varied attributes overwritten (the usual audit design);
- :func:`matched_sets` finds them in an existing persona table: personas that agree on every other
  column (and the seed, when there is a ``seed`` column) and cover every level once.

:func:`seed_groups` builds the arity-matched null's groups: each base persona copied ``n`` times,
identical but for a replicate number from which the request seed is derived.

Every table returned carries ``set_id`` (the matched set), ``group`` (the level combination, the
varied attributes' values joined with ``/`` in the order given) and a fresh ``persona_id``.

Examples
--------
>>> import pandas as pd
>>> base = pd.DataFrame({"persona_id": ["p1", "p2"], "sex": ["male", "female"], "age": [30, 60]})
>>> sets = counterfactual_personas(base, {"sex": ["female", "male"]})
>>> sets[["persona_id", "set_id", "group", "sex", "age"]].values.tolist()[:2]
[['p1~female', 'p1', 'female', 'female', 30], ['p1~male', 'p1', 'male', 'male', 30]]
>>> matched_sets(sets.drop(columns=["set_id", "group"]), ["sex"])["set_id"].nunique()
2
"""
from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import pandas as pd

from pvsst.core.errors import InputError

SET_COLUMNS = ("set_id", "group")


def _check(table: pd.DataFrame, columns: Sequence[str], id_column: str, source: str) -> None:
    if id_column not in table.columns:
        raise InputError(source, id_column, "missing column")
    for column in columns:
        if column not in table.columns:
            raise InputError(source, column,
                             f"no such persona attribute (columns: {', '.join(map(str, table.columns))})")
    if table[id_column].duplicated().any():
        raise InputError(source, id_column,
                         f"duplicate persona id {table.loc[table[id_column].duplicated(), id_column].iloc[0]!r}")


def group_label(values: Sequence[object]) -> str:
    """The group name of a level combination: values joined with ``/``.

    >>> group_label(["black", "female"])
    'black/female'
    """
    return "/".join(map(str, values))


def counterfactual_personas(base: pd.DataFrame, levels: Mapping[str, Sequence[object]], *,
                            id_column: str = "persona_id", source: str = "personas") -> pd.DataFrame:
    """Every base persona once per combination of ``levels`` (attribute -> its levels), all else kept.

    Returns the copies in base order, combinations in the order of ``levels``; ``persona_id`` is
    ``<base id>~<group>``, ``set_id`` the base id. Derived text columns (a rendered card) must be
    rendered again from the copies.
    """
    attributes = list(levels)
    if not attributes:
        raise InputError(source, "vary", "name at least one attribute to vary")
    _check(base, attributes, id_column, source)
    for attribute in attributes:
        if len(set(levels[attribute])) < 2 or len(set(levels[attribute])) != len(levels[attribute]):
            raise InputError(source, f"vary.{attribute}", "needs at least 2 distinct levels, each named once")
    combos = list(itertools.product(*(levels[a] for a in attributes)))
    parts = []
    for combo in combos:
        copy = base.copy()
        for attribute, value in zip(attributes, combo):
            copy[attribute] = value
        label = group_label(combo)
        copy.insert(0, "group", label)
        copy.insert(0, "set_id", base[id_column].to_numpy())
        copy[id_column] = base[id_column].astype(str) + "~" + label
        copy["_order"] = range(len(base))
        parts.append(copy)
    out = pd.concat(parts, ignore_index=True)
    out["_combo"] = out["group"].map({group_label(c): i for i, c in enumerate(combos)})
    return out.sort_values(["_order", "_combo"], kind="stable").drop(columns=["_order",
                                                                              "_combo"]).reset_index(drop=True)


def matched_sets(personas: pd.DataFrame, vary: Sequence[str], *, id_column: str = "persona_id",
                 ignore: Sequence[str] = (), source: str = "personas") -> pd.DataFrame:
    """The matched sets present in a persona table: rows equal on every column but ``id_column``,
    ``vary`` and ``ignore`` (e.g. a rendered ``card``), covering each level combination seen in the
    table exactly once.

    Returns the members of complete sets with ``set_id`` (``set1``, ``set2``, ... in table order) and
    ``group`` added; personas in incomplete or ambiguous sets (a level missing, or twice) are left out.

    Examples
    --------
    >>> people = pd.DataFrame({"persona_id": ["a", "b", "c"], "sex": ["male", "female", "male"],
    ...                        "age": [30, 30, 50], "seed": 1})
    >>> matched_sets(people, ["sex"])[["persona_id", "set_id", "group"]].values.tolist()
    [['a', 'set1', 'male'], ['b', 'set1', 'female']]
    """
    vary = list(vary)
    if not vary:
        raise InputError(source, "vary", "name at least one attribute to vary")
    _check(personas, [*vary, *ignore], id_column, source)
    keys = [c for c in personas.columns if c not in {id_column, *vary, *ignore, *SET_COLUMNS}]
    table = personas.copy()
    table["group"] = [group_label(row) for row in table[vary].itertuples(index=False, name=None)]
    n_levels = table["group"].nunique()
    if n_levels < 2:
        raise InputError(source, ",".join(vary), "takes fewer than 2 level combinations in the table")
    key_frame = table[keys].astype(str) if keys else pd.DataFrame(index=table.index, data={"_all": ""})
    code = pd.Series(pd.factorize(pd.MultiIndex.from_frame(key_frame))[0], index=table.index)
    counts = table.groupby(code)["group"].agg(["size", "nunique"])
    complete = counts.index[(counts["size"] == n_levels) & (counts["nunique"] == n_levels)]
    kept = table[code.isin(complete)].copy()
    order = {c: f"set{i + 1}" for i, c in enumerate(pd.unique(code[code.isin(complete)]))}
    kept.insert(1, "set_id", code[code.isin(complete)].map(order).to_numpy())
    return kept.reset_index(drop=True)


def seed_groups(base: pd.DataFrame, n_groups: int, *, id_column: str = "persona_id",
                source: str = "personas") -> pd.DataFrame:
    """The arity-matched null's groups: each base persona ``n_groups`` times, identical but for
    ``replicate`` (0..n-1), from which the run derives a different request seed per copy.

    >>> base = pd.DataFrame({"persona_id": ["p1"], "sex": ["male"]})
    >>> seed_groups(base, 2)[["persona_id", "set_id", "group", "replicate"]].values.tolist()
    [['p1~seed0', 'p1', 'seed0', 0], ['p1~seed1', 'p1', 'seed1', 1]]
    """
    if n_groups < 2:
        raise InputError(source, "null groups", f"needs at least 2 seed groups, got {n_groups}")
    _check(base, [], id_column, source)
    parts = []
    for replicate in range(n_groups):
        copy = base.copy()
        copy.insert(0, "group", f"seed{replicate}")
        copy.insert(0, "set_id", base[id_column].to_numpy())
        copy[id_column] = base[id_column].astype(str) + f"~seed{replicate}"
        copy["replicate"] = replicate
        copy["_order"] = range(len(base))
        parts.append(copy)
    out = pd.concat(parts, ignore_index=True)
    return out.sort_values(["_order", "replicate"], kind="stable").drop(columns="_order").reset_index(drop=True)
