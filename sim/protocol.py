"""Which procedure a trial follows: the protocol presets and their named mechanics.

A study names its procedure in the spec's ``protocol`` section: ``pvsst`` (ours, the default) or
``pvsst_reference`` (the mechanics of the PV-SST reference implementation). Each mechanic is a named
setting that a preset fills and a spec may override; the wording of every prompt and the persona tables
are study materials, a directory named by ``materials`` (``None``: the materials pvsst ships).

Examples
--------
>>> protocol_from_preset("pvsst").render
'data'
>>> protocol_from_preset("pvsst_reference", render="data").preset
'pvsst_reference'
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from personas.errors import InputError

PRESET_NAMES = ("pvsst", "pvsst_reference")


@dataclass(frozen=True)
class Protocol:
    """The mechanics of one trial's procedure (every field a named, documented setting).

    ``render``: how text written by one agent enters another agent's prompt: ``data`` (line breaks and
    control characters folded, quotes escaped: no post can forge a feed line) or ``verbatim`` (pasted as
    written, as the reference implementation does). ``materials``: a materials directory (templates,
    persona tables, account ids); ``None`` for pvsst's own.
    """

    preset: Literal["pvsst", "pvsst_reference"] = "pvsst"
    render: Literal["data", "verbatim"] = "data"
    materials: str | None = None


PRESETS: dict[str, dict[str, object]] = {
    "pvsst": {},
    "pvsst_reference": {"render": "verbatim"},
}
"""Preset name -> the settings it changes from the dataclass defaults (pvsst's own procedure)."""


def protocol_from_preset(preset: str = "pvsst", **overrides: object) -> Protocol:
    """The protocol of ``preset`` with ``overrides`` applied; unknown presets or settings are errors."""
    if preset not in PRESETS:
        raise InputError("protocol", "preset", f"unknown preset {preset!r} (known: {', '.join(PRESET_NAMES)})")
    names = {f.name for f in dataclasses.fields(Protocol)} - {"preset"}
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise InputError("protocol", unknown[0], f"unknown protocol setting (known: {', '.join(sorted(names))})")
    return Protocol(preset=preset, **{**PRESETS[preset], **overrides})
