"""The spec's ``protocol`` section: which procedure the trials follow (``pvsst.sim.protocol``).

``protocol: {preset: pvsst | pvsst_reference, <setting>: <value>, ..., materials: DIR}``. The preset
fills every setting; a setting given in the spec overrides the preset's value. Unknown settings and
values are errors naming the field. The section is stored fully resolved (every setting with the value
it takes), so the spec hash covers the exact procedure, not just a preset name whose meaning lives in
code.

The schema is generated from :class:`pvsst.sim.protocol.Protocol`, so a setting added there is a spec field
at once, with the same allowed values.

Examples
--------
>>> spec = ProtocolSpec.model_validate({"preset": "pvsst_reference", "vote_sampling": "streams"})
>>> spec.vote_sampling, spec.initial_stances, spec.to_protocol().preset
('streams', 'reference', 'pvsst_reference')
>>> ProtocolSpec().persona_order
'draw'
"""
from __future__ import annotations

import dataclasses
import typing
from typing import Any, Literal

from pydantic import create_model, model_validator

from pvsst.experiments.spec.base import NonEmptyText, SpecFieldError, StrictModel
from pvsst.sim.protocol import PRESET_NAMES, PRESETS, Protocol, protocol_from_preset, setting_names


class _ProtocolBase(StrictModel):
    """Base of the generated :class:`ProtocolSpec`: resolves the preset before field validation."""

    @model_validator(mode="before")
    @classmethod
    def _resolve_preset(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        preset = data.get("preset", "pvsst")
        if preset not in PRESETS:
            raise SpecFieldError("preset", f"unknown preset {preset!r} (known: {', '.join(PRESET_NAMES)})")
        defaults = dataclasses.asdict(protocol_from_preset(preset))
        return {**defaults, **data}

    def to_protocol(self) -> Protocol:
        """The engine's :class:`~pvsst.sim.protocol.Protocol` of this section."""
        return Protocol(**self.model_dump())


def _fields() -> dict[str, Any]:
    hints = typing.get_type_hints(Protocol)
    fields: dict[str, Any] = {"preset": (Literal[PRESET_NAMES], "pvsst")}  # type: ignore[valid-type]
    defaults = {f.name: f.default for f in dataclasses.fields(Protocol)}
    for name in setting_names():
        annotation = hints[name]
        if typing.get_origin(annotation) is not Literal:
            annotation = NonEmptyText | None
        fields[name] = (annotation, defaults[name])
    return fields


ProtocolSpec = create_model("ProtocolSpec", __base__=_ProtocolBase, __doc__=(
    "The trial procedure: a preset and the settings a spec overrides (see :mod:`pvsst.sim.protocol`)."),
    **_fields())
