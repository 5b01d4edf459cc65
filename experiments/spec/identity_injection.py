"""The ``identity_injection`` section of a survey condition: which identity vectors steer its calls, and how.

A condition with this section adds each persona's control vector (PSII, :mod:`pvsst.sim.llm.steering`)
to the embedded model's hidden states on every call that asks that persona: the sum of the persona's
``attributes`` vectors from the artifact ``vectors`` at ``layers``, times ``coef``, plus noise
``N(0, noise_sigma^2 I)`` from the persona's own seed, on the tokens of ``scope``. The prompt-level
profile is the condition's ``persona_card``: PSII keeps it (``persona_card: profile``); leaving the
card out is PSII's ablation without the profile.

``vectors`` is a path relative to the instrument file's folder (or absolute); the file's sha256 is
recorded in the instrument's lock and enters the response-cache key of every steered call.

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
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from pvsst.core.errors import InputError
from pvsst.experiments.spec.base import NonEmptyText, StrictModel, first_duplicate
from pvsst.sim.identity.vectors import parse_layers


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
