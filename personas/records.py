"""Persona records: the typed single-persona view and the table file format (Parquet or CSV).

The interchange format is a pandas DataFrame, one row per persona, with a unique ``persona_id``
column first. :func:`write_personas` writes it atomically (temp file in the same directory, then
rename) and deterministically (the same table gives the same bytes); :func:`read_personas` reads it
back and checks it. :class:`PersonaRecord` is the typed view of one row.

Example
-------
>>> import tempfile, pathlib
>>> from pvsst.personas.synthesis import synthesize
>>> table = synthesize(20, seed=1).personas
>>> path = pathlib.Path(tempfile.mkdtemp()) / "p.parquet"
>>> write_personas(table, path) == path, read_personas(path).shape == table.shape
(True, True)
>>> records_from_frame(table)[0].persona_id
'p0000001'
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pvsst.core.atomic import atomic_file
from pvsst.core.errors import InputError
from pvsst.core.input_files import regular_file
from pvsst.core.validation import first_duplicate

FORMATS = (".parquet", ".csv")


@dataclass(frozen=True)
class PersonaRecord:
    """One persona. Census and seed attributes, survey-derived attributes, and provenance ids.

    Fields absent from a source (e.g. state for a GSS respondent) are ``None``.
    """

    persona_id: str
    age: int
    age_band: str
    sex: str
    race_ethnicity: str
    education: str | None = None
    state: str | None = None
    state_name: str | None = None
    region: str | None = None
    income: int | None = None
    income_band: str | None = None
    party_id: str | None = None
    party: str | None = None
    ideology: str | None = None
    religiosity: str | None = None
    posting_style: str | None = None
    survey_respondent_id: int | None = None
    respondent_id: int | None = None
    source: str | None = None


_FIELDS = [f.name for f in dataclasses.fields(PersonaRecord)]


def records_from_frame(frame: pd.DataFrame) -> list[PersonaRecord]:
    """Typed records of a persona table (columns that are not record fields are ignored)."""
    columns = [c for c in _FIELDS if c in frame.columns]
    out = []
    for row in frame[columns].itertuples(index=False, name=None):
        values = {c: (None if pd.isna(v) else (v.item() if hasattr(v, "item") else v))
                  for c, v in zip(columns, row)}
        out.append(PersonaRecord(**values))
    return out


def frame_from_records(records: list[PersonaRecord]) -> pd.DataFrame:
    """The persona table of a list of records (one column per field)."""
    return pd.DataFrame([dataclasses.asdict(r) for r in records], columns=_FIELDS)


def _format_of(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise InputError(str(path), "path", f"unknown persona file type {suffix or '(none)'!r}; use .parquet or .csv")
    return suffix


def _check_table(frame: pd.DataFrame, source: str) -> None:
    if "persona_id" not in frame.columns:
        raise InputError(source, "persona_id", "missing column")
    if frame["persona_id"].isna().any():
        raise InputError(source, "persona_id", "empty id")
    duplicate = first_duplicate(frame["persona_id"].tolist())
    if duplicate:
        raise InputError(source, "persona_id", f"duplicate id {duplicate[1]!r}")


def write_personas(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write a persona table to ``path`` (``.parquet`` or ``.csv``), atomically; return the path."""
    path = Path(path)
    suffix = _format_of(path)
    _check_table(frame, "personas")
    with atomic_file(path) as tmp:
        if suffix == ".parquet":
            table = pa.Table.from_pandas(frame, preserve_index=False)
            pq.write_table(table, tmp, compression="zstd")
        else:
            frame.to_csv(tmp, index=False, lineterminator="\n")
    return path


def read_personas(path: str | Path) -> pd.DataFrame:
    """Read a persona table written by :func:`write_personas` (or any table with ``persona_id``)."""
    path = Path(path)
    suffix = _format_of(path)
    if not path.exists():
        raise InputError(str(path), "path", "no such persona file")
    regular_file(path, "path", text=suffix == ".csv")
    try:
        frame = pd.read_parquet(path) if suffix == ".parquet" else pd.read_csv(path)
    except (OSError, ValueError, pa.ArrowException) as err:
        raise InputError(str(path), "file",
                         f"not a readable {suffix[1:]} persona table ({type(err).__name__})") from None
    _check_table(frame, str(path))
    return frame
