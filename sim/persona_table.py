"""Persona tables: the engine's only view of who the agents are.

A persona table is any DataFrame with a ``persona_id`` column, a short ``label`` and a
``posting_style`` (PV-SST's fields), optionally a ``card`` (the text put in prompts; built from label
and style when absent) and any attribute columns (age_band, party_id, ...), which are copied into
``agents.parquet``. It can come from census synthesis, respondent matching, or a hand-written CSV:
the engine does not care.

Examples
--------
>>> table = load_persona_table()
>>> len(table), list(table.columns[:3])
(24, ['persona_id', 'label', 'posting_style'])
>>> table.loc[0, "card"]
'local news reporter; posting style: measured, asks pointed questions, cites concrete cases'
"""
from __future__ import annotations

import functools
import io
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from pvsst.core.errors import InputError
from pvsst.core.validation import first_duplicate

REQUIRED_COLUMNS = ("persona_id", "label", "posting_style")


def default_persona_path() -> Path:
    """The honest persona table of pvsst's own materials (``sim/materials/pvsst``)."""
    return Path(str(resources.files("pvsst.sim.materials").joinpath("pvsst", "honest_personas.csv")))


def load_persona_table(source: str | Path | pd.DataFrame | None = None) -> pd.DataFrame:
    """Read and validate a persona table (CSV or Parquet path, a DataFrame, or ``None`` = the default).

    A file is read on every call; what it parses to is kept per process by its path and bytes, so a
    trial after the first takes a copy instead of parsing again, and an edited file is parsed afresh.
    """
    if isinstance(source, pd.DataFrame):
        return _validated(source.copy(), "persona table")
    path = Path(source) if source is not None else default_persona_path()
    try:
        data = path.read_bytes()
    except OSError as err:
        raise InputError(str(path), "personas", f"cannot read persona table ({err})") from None
    return _parsed_file(str(path), data).copy()


@functools.lru_cache(maxsize=16)
def _parsed_file(name: str, data: bytes) -> pd.DataFrame:
    try:
        table = (pd.read_parquet(io.BytesIO(data)) if name.endswith(".parquet")
                 else pd.read_csv(io.BytesIO(data), dtype={"persona_id": str}))
    except (OSError, ValueError) as err:
        raise InputError(name, "personas", f"cannot read persona table ({err})") from None
    return _validated(table, name)


def _validated(table: pd.DataFrame, name: str) -> pd.DataFrame:
    for column in REQUIRED_COLUMNS:
        if column not in table.columns:
            raise InputError(name, column, "missing column in persona table")
    if table.empty:
        raise InputError(name, "personas", "persona table has no rows")
    table["persona_id"] = table["persona_id"].astype(str)
    duplicate = first_duplicate(table["persona_id"].tolist())
    if duplicate:
        raise InputError(name, "persona_id", f"duplicate persona id {duplicate[1]!r}")
    if "card" not in table.columns:
        table["card"] = table["label"].astype(str) + "; posting style: " + table["posting_style"].astype(str)
    return table.reset_index(drop=True)


def draw_personas(table: pd.DataFrame, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """``n`` personas for one trial: a random sample without replacement when the table is large
    enough, else the whole table in random order, repeated (and each copy reshuffled)."""
    if n <= len(table):
        rows = rng.choice(len(table), size=n, replace=False)
    else:
        reps = -(-n // len(table))
        rows = np.concatenate([rng.permutation(len(table)) for _ in range(reps)])[:n]
    return table.iloc[rows].reset_index(drop=True)


def cycle_personas(table: pd.DataFrame, n: int) -> pd.DataFrame:
    """``n`` personas in table order, wrapping around: agent ``i`` gets row ``i % len(table)`` (the
    reference implementation's ``pool[i % len(pool)]``; no random draw).

    >>> cycle_personas(pd.DataFrame({"persona_id": ["p", "q"]}), 3)["persona_id"].tolist()
    ['p', 'q', 'p']
    """
    return table.iloc[[i % len(table) for i in range(n)]].reset_index(drop=True)
