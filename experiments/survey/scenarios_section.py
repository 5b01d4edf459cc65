"""The ``scenarios`` section of a survey instrument: factors whose levels are vignette fragments.

A scenario experiment asks the same question under several situations. Each factor (a local case
level, a news framing, what a household member did) has named levels, and each level is a text
fragment. A scenario is one level of every factor: by default every combination (the full factorial),
or the explicit list ``combinations``. The scenario's vignette is ``vignette`` (a ``string.Template``;
``${factor}`` stands for the factor's fragment) or, without it, the fragments in factor order, one
paragraph each, empty fragments left out. The vignette comes before the question's wording, so every
cell (or persona) x scenario x question is one request, seeded and cached on its own.

:func:`check_scenarios` is the instrument's static check (run when the instrument is read):
factors and levels are named once, every factor has a level, the vignette places every factor and
names no other, and every combination names each factor once with a level it defines.

Examples
--------
>>> section = ScenariosSpec.model_validate({"factors": [
...     {"id": "cases", "levels": [{"id": "none", "text": "No cases nearby."}, {"id": "many", "text": "Many cases."}]},
...     {"id": "news", "levels": [{"id": "absent", "text": ""}, {"id": "loss", "text": "Not reporting harms you."}]}]})
>>> [s.id for s in scenario_list(section)]
['cases=none;news=absent', 'cases=none;news=loss', 'cases=many;news=absent', 'cases=many;news=loss']
>>> scenario_list(section)[1].vignette
'No cases nearby.\\n\\nNot reporting harms you.'
"""
from __future__ import annotations

import itertools
import string
from dataclasses import dataclass

import pandas as pd
from pydantic import Field

from pvsst.core.validation import Identifier, SpecFieldError, StrictModel, first_duplicate

SCENARIO_COLUMN = "scenario"
RESERVED = (SCENARIO_COLUMN, "vignette")


class ScenarioLevelSpec(StrictModel):
    """One level of a factor: its name and the fragment it inserts (may be empty: "no news item")."""

    id: Identifier
    text: str = ""


class ScenarioFactorSpec(StrictModel):
    """A factor: its name and its levels, in the order reports list them (the first is the reference)."""

    id: Identifier
    levels: list[ScenarioLevelSpec] = Field(default_factory=list)


class ScenariosSpec(StrictModel):
    """Scenario factors of an instrument (see the module docstring)."""

    factors: list[ScenarioFactorSpec] = Field(min_length=1)
    vignette: str | None = None
    combinations: list[dict[str, str]] | None = None


@dataclass(frozen=True)
class Scenario:
    """One combination: its id (``factor=level`` joined by ``;``), the level of each factor, its vignette."""

    id: str
    levels: dict[str, str]
    vignette: str


def _placeholders(template: str) -> list[str]:
    return [m.group("named") or m.group("braced") for m in string.Template.pattern.finditer(template)
            if m.group("named") or m.group("braced")]


def check_scenarios(section: ScenariosSpec, where: str = "scenarios") -> None:
    """Raise :class:`SpecFieldError` (field relative to the instrument) for the first problem found.

    Parameters
    ----------
    section
        The instrument's ``scenarios`` section.
    where
        The section's field name in error messages.

    Returns
    -------
    None

    Examples
    --------
    >>> bad = ScenariosSpec.model_validate({"factors": [{"id": "cases", "levels": [{"id": "none"}]}],
    ...                                     "combinations": [{"cases": "many"}]})
    >>> check_scenarios(bad)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pvsst.core.validation.SpecFieldError: combination names level 'many' that factor 'cases' does not ...
    """
    factors = {factor.id: factor for factor in section.factors}
    if (dup := first_duplicate([f.id for f in section.factors])) is not None:
        raise SpecFieldError(f"{where}.factors[{dup[0]}].id", f"duplicate factor {dup[1]!r}")
    for i, factor in enumerate(section.factors):
        if factor.id in RESERVED:
            raise SpecFieldError(f"{where}.factors[{i}].id", f"{factor.id!r} names a column of the scenario table")
        if not factor.levels:
            raise SpecFieldError(f"{where}.factors[{i}].levels", f"factor {factor.id!r} has no level")
        if (dup := first_duplicate([level.id for level in factor.levels])) is not None:
            raise SpecFieldError(f"{where}.factors[{i}].levels[{dup[0]}].id", f"duplicate level {dup[1]!r}")
    if section.vignette is not None:
        named = _placeholders(section.vignette)
        for name in named:
            if name not in factors:
                raise SpecFieldError(f"{where}.vignette", f"references factor {name!r} that is not defined "
                                     f"(factors: {', '.join(factors)})")
        for name in factors:
            if name not in named:
                raise SpecFieldError(f"{where}.vignette", f"does not place factor {name!r} (write ${{{name}}})")
    for i, combination in enumerate(section.combinations or []):
        for name, level in combination.items():
            if name not in factors:
                raise SpecFieldError(f"{where}.combinations[{i}]", f"combination names factor {name!r} that is "
                                     f"not defined (factors: {', '.join(factors)})")
            known = [lv.id for lv in factors[name].levels]
            if level not in known:
                raise SpecFieldError(f"{where}.combinations[{i}]", f"combination names level {level!r} that "
                                     f"factor {name!r} does not define (levels: {', '.join(known)})")
        if missing := [name for name in factors if name not in combination]:
            raise SpecFieldError(f"{where}.combinations[{i}]", f"combination gives no level of factor {missing[0]!r}")
    if section.combinations is not None:
        keys = [tuple(c[f] for f in factors) for c in section.combinations]
        if (dup := first_duplicate(keys)) is not None:
            raise SpecFieldError(f"{where}.combinations[{dup[0]}]", "combination listed twice")


def _vignette(section: ScenariosSpec, texts: dict[str, str]) -> str:
    if section.vignette is not None:
        return string.Template(section.vignette).substitute(texts).strip()
    return "\n\n".join(text.strip() for text in texts.values() if text.strip())


def scenario_list(section: ScenariosSpec) -> list[Scenario]:
    """The scenarios of a checked section: every combination of levels, or ``combinations`` in their order.

    Parameters
    ----------
    section
        A section that :func:`check_scenarios` accepts.

    Returns
    -------
    list of Scenario
        Full factorial in factor and level order (the last factor varies fastest), else the listed ones.

    Examples
    --------
    >>> section = ScenariosSpec.model_validate({"factors": [{"id": "a", "levels": [{"id": "x"}, {"id": "y"}]}],
    ...                                         "combinations": [{"a": "y"}]})
    >>> [s.id for s in scenario_list(section)]
    ['a=y']
    """
    texts = {factor.id: {level.id: level.text for level in factor.levels} for factor in section.factors}
    if section.combinations is not None:
        chosen = [tuple(c[f.id] for f in section.factors) for c in section.combinations]
    else:
        chosen = list(itertools.product(*[[level.id for level in f.levels] for f in section.factors]))
    out = []
    for levels in chosen:
        named = dict(zip(texts, levels))
        out.append(Scenario(id=";".join(f"{f}={lv}" for f, lv in named.items()), levels=named,
                            vignette=_vignette(section, {f: texts[f][lv] for f, lv in named.items()})))
    return out


def scenario_table(section: ScenariosSpec) -> pd.DataFrame:
    """One row per scenario: ``scenario`` (its id), one column per factor (its level) and ``vignette``.

    Parameters
    ----------
    section
        A section that :func:`check_scenarios` accepts.

    Returns
    -------
    pandas.DataFrame
        What ``RUN/scenarios.parquet`` holds: which levels each response's scenario had.

    Examples
    --------
    >>> section = ScenariosSpec.model_validate({"factors": [{"id": "a", "levels": [{"id": "x", "text": "X."}]}]})
    >>> scenario_table(section).to_dict("records")
    [{'scenario': 'a=x', 'a': 'x', 'vignette': 'X.'}]
    """
    factors = [f.id for f in section.factors]
    rows = [{SCENARIO_COLUMN: s.id, **s.levels, "vignette": s.vignette} for s in scenario_list(section)]
    return pd.DataFrame(rows, columns=[SCENARIO_COLUMN, *factors, "vignette"])
