"""The ``identity_injection`` section of a survey condition or a study: which identity vectors steer its calls.

A survey condition or a study with this section adds each persona's control vector (PSII,
:mod:`pvsst.sim.llm.steering`) to the embedded model's hidden states on every call made as that
persona: the sum of the persona's ``attributes`` vectors from the artifact ``vectors`` at ``layers``,
times ``coef``, plus noise ``N(0, noise_sigma^2 I)`` from the persona's own seed, on the tokens of
``scope``. In a survey the prompt-level profile is the condition's ``persona_card``: PSII keeps it
(``persona_card: profile``); leaving the card out is PSII's ablation without the profile. A study's
section (:class:`StudyIdentityInjectionSpec`) says it with ``profile``.

``vectors`` is a path relative to the spec or instrument file's folder (or absolute); the file's sha256
is recorded in the lock and enters the response-cache key of every steered call. One definition serves
both: the fields and their checks (:class:`IdentityInjectionSpec`), the models that can be steered
(:func:`unsteerable_model_problem`) and each persona's steering (:meth:`IdentityInjectionSpec.steerings`).

Examples
--------
>>> section = IdentityInjectionSpec(vectors="v.npz", attributes=["sex"], layers="10-12", coef=2)
>>> section.layers, section.scope
([10, 11, 12], 'all')
>>> IdentityInjectionSpec(vectors="v.npz", attributes=["sex"], layers=[12, 10, 10]).layers
[10, 12]
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import Field, field_validator

from pvsst.core.errors import InputError
from pvsst.experiments.spec.base import NonEmptyText, StrictModel, first_duplicate
from pvsst.sim.identity.injection import persona_steerings
from pvsst.sim.identity.vectors import parse_layers
from pvsst.sim.llm.providers.embedded import model_sha256
from pvsst.sim.llm.providers.registry import split_model
from pvsst.sim.llm.steering import Steering


def unsteerable_model_problem(models: Sequence[str]) -> str | None:
    """Why identity injection cannot run on ``models`` (the first one that is not a local llama.cpp
    model), or ``None``.

    Examples
    --------
    >>> unsteerable_model_problem(["embedded/smollm2-135m"]) is None
    True
    >>> unsteerable_model_problem(["embedded/smollm2-135m", "openai/gpt-4o-mini"])
    'identity injection needs a local llama.cpp model (embedded/...); openai/gpt-4o-mini cannot be steered'
    """
    unsteerable = [m for m in models if not str(m).startswith("embedded/")]
    if not unsteerable:
        return None
    return f"identity injection needs a local llama.cpp model (embedded/...); {unsteerable[0]} cannot be steered"


class IdentityInjectionSpec(StrictModel):
    """Identity injection of one condition (see the module text)."""

    vectors: NonEmptyText
    attributes: list[NonEmptyText] = Field(min_length=1)
    layers: list[int] = Field(min_length=1)
    coef: float = Field(default=2.0, ge=-100.0, le=100.0)
    noise_sigma: float = Field(default=0.0, ge=0.0, le=100.0)
    scope: Literal["prompt", "response", "all"] = "all"

    @field_validator("layers", mode="before")
    @classmethod
    def _layers(cls, value):
        if isinstance(value, str):
            try:
                return list(parse_layers(value))
            except InputError as err:
                raise ValueError(err.problem) from None
        return value

    @field_validator("layers")
    @classmethod
    def _sorted_layers(cls, value: list[int]) -> list[int]:
        if any(layer < 1 for layer in value):
            raise ValueError("layers start at 1 (llama.cpp steers no layer 0)")
        return sorted(set(value))

    @field_validator("attributes")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if (dup := first_duplicate(value)) is not None:
            raise ValueError(f"attribute {dup[1]!r} is named twice")
        return value

    @field_validator("coef", "noise_sigma")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    def vectors_path(self, spec_dir: str | Path) -> Path:
        """The vectors file: ``vectors`` read from ``spec_dir`` (the instrument's folder) unless absolute.

        Examples
        --------
        >>> IdentityInjectionSpec(vectors="v.npz", attributes=["sex"], layers=[10]).vectors_path("/a").as_posix()
        '/a/v.npz'
        """
        path = Path(self.vectors)
        return path if path.is_absolute() else Path(spec_dir) / path

    def steerings(self, personas: pd.DataFrame, spec_dir: str | Path, models: Sequence[str], *, seed: int,
                  vectors: str | Path | None = None) -> dict[str, Steering]:
        """``{persona_id: Steering}`` for every row of ``personas``
        (:func:`pvsst.sim.identity.injection.persona_steerings`), each persona's noise seed drawn from
        ``seed``. The file (``vectors``, else :meth:`vectors_path`) must have been measured on the file
        of every embedded model among ``models`` and hold the layers, attributes and values the personas
        need; the first problem is an ``InputError`` (one line), before any call.
        """
        path = Path(vectors) if vectors is not None else self.vectors_path(spec_dir).resolve()
        names = [split_model(m)[1] for m in models if split_model(m)[0] == "embedded"]
        out: dict[str, Steering] = {}
        for name in names or [None]:
            out = persona_steerings(personas, path, attributes=self.attributes, layers=self.layers, coef=self.coef,
                                    noise_sigma=self.noise_sigma, scope=self.scope, seed=seed,
                                    model_sha256=model_sha256(name) if name else None)
        return out


class StudyIdentityInjectionSpec(IdentityInjectionSpec):
    """A study's identity injection: the survey condition's fields, and ``profile`` (``true``: the persona
    card stays in the post and vote prompts, as PSII keeps it; ``false``: PSII's ablation, the prompts'
    persona line is left empty and the vectors alone say who the agent is).

    Examples
    --------
    >>> StudyIdentityInjectionSpec(vectors="v.npz", attributes=["sex"], layers="10-11", profile=False).profile
    False
    """

    profile: bool = True
