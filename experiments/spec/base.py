"""Shared pieces of the study-spec schema: the strict base model and a field-addressed validation error.

Every spec model rejects unknown keys and refuses silent type coercion (``"12"`` is not an integer,
``1`` is not ``true``), because a preregistered design must mean exactly what its text says.
"""
from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

# Identifiers used in trial ids and file names: letters, digits, dot, dash and underscore.
IDENTIFIER_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$"
Identifier = Annotated[str, StringConstraints(pattern=IDENTIFIER_PATTERN, max_length=80)]
NonEmptyText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Share = Annotated[float, Field(ge=0.0, le=1.0)]

FACTOR_COLUMNS = ("model", "topic_id", "seed", "condition")
"""Trial-table columns that name a factor; block keys and run orders are written in these names."""


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
