"""Validation pieces every package may use: the strict pydantic base and a field-addressed error.

They live in ``pvsst.core``, which every package may import (it imports none of them): the study spec
(``pvsst.experiments.spec``) and the analysis plan (``pvsst.analysis.stats.plan``) are built from the same
base, so a spec and the plan inside it obey the same rules. Every model rejects unknown keys and refuses
silent type coercion (``"12"`` is not an integer, ``1`` is not ``true``), because a preregistered
design must mean exactly what its text says.

Examples
--------
>>> class Point(StrictModel):
...     x: int
>>> Point(x=1).x
1
>>> from pydantic import ValidationError
>>> try:
...     Point.model_validate({"x": 1, "y": 2})
... except ValidationError as err:
...     print(err.errors()[0]["type"])
extra_forbidden
"""
from __future__ import annotations

import difflib
import reprlib
import typing
from typing import Annotated, Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from pvsst.core.defaults import IDENTIFIER_PATTERN
from pvsst.core.errors import InputError

Identifier = Annotated[str, StringConstraints(pattern=IDENTIFIER_PATTERN, max_length=80)]
NonEmptyText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Share = Annotated[float, Field(ge=0.0, le=1.0)]


class StrictModel(BaseModel):
    """Base of every spec model: unknown keys are errors and values are never coerced across types."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class SpecFieldError(ValueError):
    """A validator's complaint about one field, addressed relative to the model that raised it.

    Pydantic reports errors raised in model validators at the model's own location; ``field`` adds
    the path below it (``"trial.n_agents"``, ``"[2]"``) so the one-line error names the exact field.

    Examples
    --------
    >>> err = SpecFieldError("factors.seeds[1]", "duplicate seed 101")
    >>> (err.field, str(err))
    ('factors.seeds[1]', 'duplicate seed 101')
    """

    def __init__(self, field: str, problem: str):
        self.field = field
        super().__init__(problem)


def first_duplicate(values: list) -> tuple[int, object] | None:
    """The index and value of the first repeated element, or ``None``.

    Examples
    --------
    >>> first_duplicate([101, 211, 101]), first_duplicate([1, 2])
    ((2, 101), None)
    """
    seen = set()
    for index, value in enumerate(values):
        if value in seen:
            return index, value
        seen.add(value)
    return None


def require_unique(values: list, noun: str = "", *, where: str = "", suffix: str = "", show=repr) -> None:
    """Raise :class:`SpecFieldError` at ``where[i]suffix`` when element ``i`` repeats an earlier one.

    The message names the value (``show`` formats it) and ``noun``: ``"seed 101 listed twice"``.

    Examples
    --------
    >>> require_unique([101, 211])
    >>> try:
    ...     require_unique([101, 211, 101], "seed", show=str)
    ... except SpecFieldError as err:
    ...     print(err.field, err)
    [2] seed 101 listed twice
    """
    duplicate = first_duplicate(values)
    if duplicate:
        index, value = duplicate
        raise SpecFieldError(f"{where}[{index}]{suffix}", f"{noun + ' ' if noun else ''}{show(value)} listed twice")


def join_field(prefix: str, suffix: str) -> str:
    """Join two dotted field paths; list indices (``[3]``) attach without a dot.

    Examples
    --------
    >>> join_field("factors.seeds", "[2]"), join_field("trial", "network.p"), join_field("", "id")
    ('factors.seeds[2]', 'trial.network.p', 'id')
    """
    if not prefix:
        return suffix
    if not suffix:
        return prefix
    return prefix + suffix if suffix.startswith("[") else f"{prefix}.{suffix}"


def describe_validation_error(err: ValidationError, root: type[BaseModel] | None = None) -> tuple[str, str]:
    """The dotted field path and a one-line problem for the first error pydantic reports.

    ``root`` is the model that was validated; an unknown key then lists the keys allowed there.

    Examples
    --------
    >>> class Inner(StrictModel):
    ...     draws: int = 1
    >>> class Outer(StrictModel):
    ...     inner: Inner = Inner()
    >>> try:
    ...     Outer.model_validate({"inner": {"drawz": 5}})
    ... except ValidationError as err:
    ...     describe_validation_error(err, Outer)
    ('inner.drawz', "unknown key (allowed: draws); did you mean 'draws'?")
    """
    first = err.errors()[0]
    loc = list(first["loc"])
    is_key = bool(loc) and loc[-1] == "[key]"
    if is_key:
        loc.pop()
    field = ""
    for part in loc:
        field = join_field(field, f"[{part}]" if isinstance(part, int) else str(part))
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, SpecFieldError):
        return join_field(field, cause.field) or "spec", str(cause)
    kind = first["type"]
    if kind == "extra_forbidden":
        problem = "unknown key" + (_key_suggestion(root, loc) if root is not None else "")
    elif kind == "missing":
        problem = "required but missing"
    else:
        message = first["msg"].removeprefix("Value error, ")
        shown = bounded_repr(first.get("input"))
        problem = f"{'key: ' if is_key else ''}{message[:300]} (got {shown})"
    return field or "spec", problem.replace("\n", " ")


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxdict, _REPR.maxlist, _REPR.maxtuple, _REPR.maxset = 3, 4, 4, 4, 4
_REPR.maxstring, _REPR.maxlong, _REPR.maxother = 50, 40, 50


def bounded_repr(value: Any, limit: int = 60) -> str:
    """``repr(value)`` built within bounds (a few items per level, long numbers and strings cut), at most
    ``limit`` characters: an error message never expands what a bad input holds.

    Examples
    --------
    >>> bounded_repr(10**400)[:20], len(bounded_repr(10**400)) <= 60
    ('1000000000000000...', True)
    >>> bounded_repr([[list(range(10))] * 10] * 10)
    '[[[0, 1, 2, 3, ...], [0, 1, 2, 3, ...], [0, 1,...'
    """
    try:
        shown = repr(value[:limit + 1]) if isinstance(value, str) else _REPR.repr(value)
    except Exception:  # a value whose repr fails: name its type
        shown = f"<{type(value).__name__}>"
    return shown if len(shown) <= limit else shown[:limit - 3] + "..."


def _key_suggestion(root: type[BaseModel], loc: list) -> str:
    """`` (allowed: ...)`` with a close match first, for an unknown key at ``loc`` below ``root``."""
    model: Any = root
    for part in loc[:-1]:
        # List indices and dict keys (contrast names, seeds) leave the model unchanged.
        if isinstance(part, str) and part in model.model_fields:
            model = _model_inside(model.model_fields[part].annotation)
            if model is None:
                return ""
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return ""
    allowed = list(model.model_fields)
    close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f" (allowed: {', '.join(allowed)}){hint}"


def _model_inside(annotation: Any) -> Any:
    """The pydantic model a field annotation holds (through Optional, list, dict and Annotated)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_inside(arg)
        if found is not None:
            return found
    return None


def checked_weights(values: Any, source: str, field: str, column: str) -> "np.ndarray":
    """The weights of column ``column`` (any sequence) as floats; ``InputError`` at ``source: field`` unless
    every weight is a finite non-negative number and not all are zero.

    Examples
    --------
    >>> checked_weights([1, "2.5", 0], "gss", "data.weight", "wt").tolist()
    [1.0, 2.5, 0.0]
    >>> try:
    ...     checked_weights([1.0, float("inf")], "gss", "data.weight", "wt")
    ... except Exception as err:
    ...     print(err)
    gss: data.weight: column 'wt' must hold finite numbers (row 1: inf)
    """
    raw = pd.Series(list(values) if not isinstance(values, pd.Series) else values).reset_index(drop=True)
    numbers = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    for problem, bad in (("numbers", np.isnan(numbers)), ("finite numbers", np.isinf(numbers)),
                         ("non-negative numbers", numbers < 0)):
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise InputError(source, field, f"column {column!r} must hold {problem} (row {row}: "
                             f"{str(raw.iloc[row])[:30]})")
    if len(numbers) and not numbers.sum() > 0:
        raise InputError(source, field, f"column {column!r}: every weight is zero")
    return numbers
