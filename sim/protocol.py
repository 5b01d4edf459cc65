"""Which procedure a trial follows: the protocol presets and their named mechanics.

A study names its procedure in the spec's ``protocol`` section: ``pvsst`` (ours, the default) or
``pvsst_reference`` (the mechanics of the PV-SST reference implementation). Each mechanic is a named
setting that a preset fills and a spec may override; the wording of every prompt and the persona tables
are study materials, a directory named by ``materials`` (``None``: the materials pvsst ships).

====================== ===========================  ==================================================
setting                ``pvsst``                    ``pvsst_reference``
====================== ===========================  ==================================================
render                 data (agent text as data)    verbatim (posts pasted as written)
persona_order          draw (seeded sample)         cycle (persona ``i`` = ``pool[i % len(pool)]``)
initial_stances        streams (numpy permutation)  reference (``random.Random(seed + 1701).shuffle``)
account_ids            materials (pvsst: ``x00``..) reference (``a00``, ``c2000`` / ``c3000``..)
viewer_ordinal         ordinal (account order)      from_id (``int(agent_id[1:])``)
adversary_opinion      fixed (never moves)          drifts (updates from its own replies)
vote_sampling          streams (numpy draw)         reference (``random.Random(seed + 9001 + r)``)
reply_handling         strict (schema-validated)    lenient (snap, clamp, cut; see pvsst.sim.replies)
retry_seed             next (attempt i: seed + i)   same (every attempt repeats the seed)
json_mode              schema (JSON schema)         json_object (Ollama ``format: json``)
reasoning              default (model's own)        off (``think: false`` on Ollama routes)
similarity_edge_cases  pvsst (nan, non-empty rows)  reference (0.0; diagonal ``n`` of ``n (n - 1)``)
number_format          two_decimals (``0.70``)      python (``0.7``, ``0.675``, ``1.0``: ``str(float)``)
transport_retries      gateway (5 tries, 1-8 s)     reference (3 tries, waits 1.5, 3, 4.5 s, any error)
reasoning_blocks       strip (litellm's split)      keep (the text as the server sent it)
vote_error_denominator rows (calls with vote rows)  voters (every vote call; parse/transport failure)
ollama_route           model (the model string's)   generate (``/api/generate``, ``system`` field)
====================== ===========================  ==================================================

Examples
--------
>>> protocol_from_preset("pvsst").render
'data'
>>> protocol_from_preset("pvsst_reference", render="data").preset
'pvsst_reference'
>>> reference = protocol_from_preset("pvsst_reference")
>>> reference.vote_sampling, reference.retry_seed, reference.json_mode
('reference', 'same', 'json_object')
>>> protocol_settings(protocol_from_preset("pvsst"))["persona_order"]
'draw'
"""
from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from typing import Literal

from pvsst.core.errors import InputError

PRESET_NAMES = ("pvsst", "pvsst_reference")


@dataclass(frozen=True)
class Protocol:
    """The mechanics of one trial's procedure (every field a named, documented setting).

    ``render``: how text written by one agent enters another agent's prompt: ``data`` (line breaks and
    control characters folded, quotes escaped: no post can forge a feed line) or ``verbatim`` (pasted as
    written, as the reference implementation does). ``materials``: a materials directory (templates,
    persona tables, account ids); ``None`` for pvsst's own.

    ``persona_order``: ``draw`` samples the trial's personas from the table with the trial seed;
    ``cycle`` seats persona ``i % len(table)`` at agent ``i``, in table order (no random draw).
    ``initial_stances``: ``streams`` permutes the balanced levels with the trial's numpy stream;
    ``reference`` lays out strongly support .. strongly oppose, ``n / 6`` each, and shuffles that list
    with Python's ``random.Random(seed + 1701)`` (needs ``n`` divisible by 6).
    ``account_ids``: ``materials`` takes the id scheme of the study materials (pvsst's own: honest
    ``a00``.., adversaries ``x00``..); ``reference`` uses the reference implementation's whatever the
    materials say: honest ``a00``.., the single source ``c2000``, distributed sources ``c3000``, ``c3001``..
    ``viewer_ordinal``: the number the adversary-slot rotation uses for a viewer: its account
    ``ordinal`` or the integer ``from_id`` (the id without its first letter).
    ``adversary_opinion``: ``fixed`` (adversaries keep the pushed extreme) or ``drifts`` (their opinion
    and confidence update from their own replies, as honest agents' do).
    ``vote_sampling``: ``streams`` (numpy draw from the trial's vote stream) or ``reference`` (one
    ``random.Random(seed + 9001 + round)`` per round; per honest voter in id order
    ``rng.sample(eligible, min(k, len(eligible)))`` over the indices of the round's other posts).
    ``reply_handling``: ``strict`` (a reply must satisfy the JSON schema, else the call failed) or
    ``lenient`` (any JSON object is taken and sanitised: :mod:`pvsst.sim.replies`).
    ``retry_seed``: attempt ``i`` of a call uses ``seed + i`` (``next``) or the same seed (``same``).
    ``json_mode``: ask for JSON valid under the reply schema (``schema``) or any JSON object
    (``json_object``: Ollama's ``format: json``). ``reasoning``: leave the model's default (``default``)
    or switch reasoning off (``off``: Ollama's ``think: false``; other providers get nothing, since they
    have no common switch).
    ``similarity_edge_cases``: lexical similarity of fewer than two texts is ``nan`` and the diagonal
    removed is the number of non-empty rows (``pvsst``), or 0.0 and ``n`` (``reference``).

    ``number_format``: how a number (a float: confidences) is printed into every template:
    ``two_decimals`` (``0.70``, ``0.68``, ``1.00``) or ``python``, Python's ``str(float)`` (``0.7``,
    ``0.675``, ``1.0``), as the reference's f-strings print it. Integers (like counts, rounds) print as
    integers under both. ``transport_retries``: a call whose request fails (no reply) is tried again by
    the ``gateway``'s own rule (up to ``1 + max_retries`` tries, default 5, waits 1, 2, 4, 8 s or a longer
    Retry-After; timeouts, 429, 5xx and connection errors only) or by the ``reference``'s (3 tries in all,
    a wait of 1.5 s times the try number after every failed try, the last included: 1.5, 3, 4.5 s; every
    error, 4xx included). A call still failing after its tries is a transport failure under both: no
    further attempt, the post is ``(generation failed)`` under lenient handling.
    ``reasoning_blocks``: litellm moves a leading ``<think>...</think>`` block out of the reply text
    (``strip``: the reply handler gets the rest) or the handler gets the reply text exactly as the server
    sent it, block and all (``keep``; :mod:`pvsst.sim.llm.raw_reply`). ``vote_error_denominator``:
    ``vote_parse_error_rate`` counts the vote calls that left vote rows (``rows``; a parsed reply with no
    usable vote leaves none) or every voter's call (``voters``: a parsed reply without a usable vote is a
    cast ballot with no vote, recorded as rows of value 0 that parsed; only a parse or transport failure
    fails a ballot, as in the reference). ``ollama_route``: an Ollama model goes by the
    route its model string names (``model``: ``ollama_chat/`` is ``/api/chat``) or to ``/api/generate``
    with the reference's payload (``generate``: the user message as ``prompt``, the system message as
    ``system``; :func:`pvsst.sim.llm.dispatch.generate_kwargs`). Other providers are not affected.
    """

    preset: Literal["pvsst", "pvsst_reference"] = "pvsst"
    render: Literal["data", "verbatim"] = "data"
    materials: str | None = None
    persona_order: Literal["draw", "cycle"] = "draw"
    initial_stances: Literal["streams", "reference"] = "streams"
    account_ids: Literal["materials", "reference"] = "materials"
    viewer_ordinal: Literal["ordinal", "from_id"] = "ordinal"
    adversary_opinion: Literal["fixed", "drifts"] = "fixed"
    vote_sampling: Literal["streams", "reference"] = "streams"
    reply_handling: Literal["strict", "lenient"] = "strict"
    retry_seed: Literal["next", "same"] = "next"
    json_mode: Literal["schema", "json_object"] = "schema"
    reasoning: Literal["default", "off"] = "default"
    similarity_edge_cases: Literal["pvsst", "reference"] = "pvsst"
    number_format: Literal["two_decimals", "python"] = "two_decimals"
    transport_retries: Literal["gateway", "reference"] = "gateway"
    reasoning_blocks: Literal["strip", "keep"] = "strip"
    vote_error_denominator: Literal["rows", "voters"] = "rows"
    ollama_route: Literal["model", "generate"] = "model"

    def __post_init__(self) -> None:
        for name, allowed in setting_choices().items():
            value = getattr(self, name)
            if allowed is not None and value not in allowed:
                raise InputError("protocol", name, f"must be one of {', '.join(map(str, allowed))}, got {value!r}")


REFERENCE_SETTINGS: dict[str, object] = {
    "render": "verbatim",
    "persona_order": "cycle",
    "initial_stances": "reference",
    "account_ids": "reference",
    "viewer_ordinal": "from_id",
    "adversary_opinion": "drifts",
    "vote_sampling": "reference",
    "reply_handling": "lenient",
    "retry_seed": "same",
    "json_mode": "json_object",
    "reasoning": "off",
    "similarity_edge_cases": "reference",
    "number_format": "python",
    "transport_retries": "reference",
    "reasoning_blocks": "keep",
    "vote_error_denominator": "voters",
    "ollama_route": "generate",
}

PRESETS: dict[str, dict[str, object]] = {
    "pvsst": {},
    "pvsst_reference": REFERENCE_SETTINGS,
}
"""Preset name -> the settings it changes from the dataclass defaults (pvsst's own procedure)."""


def setting_names() -> tuple[str, ...]:
    """Every setting a spec may give besides ``preset`` (in declaration order)."""
    return tuple(f.name for f in dataclasses.fields(Protocol) if f.name != "preset")


def setting_choices() -> dict[str, tuple | None]:
    """Setting -> its allowed values (``None``: free text, such as ``materials``)."""
    hints = typing.get_type_hints(Protocol)
    out: dict[str, tuple | None] = {}
    for name in setting_names():
        args = typing.get_args(hints[name])
        out[name] = args if typing.get_origin(hints[name]) is Literal else None
    return out


def protocol_from_preset(preset: str = "pvsst", **overrides: object) -> Protocol:
    """The protocol of ``preset`` with ``overrides`` applied; unknown presets or settings are errors."""
    if preset not in PRESETS:
        raise InputError("protocol", "preset", f"unknown preset {preset!r} (known: {', '.join(PRESET_NAMES)})")
    names = set(setting_names())
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise InputError("protocol", unknown[0], f"unknown protocol setting (known: {', '.join(sorted(names))})")
    return Protocol(preset=preset, **{**PRESETS[preset], **overrides})


def protocol_settings(protocol: Protocol) -> dict[str, object]:
    """Every setting of ``protocol`` with its value, ``preset`` first (what manifests and metrics record)."""
    return dataclasses.asdict(protocol)


def differs_from_preset(protocol: Protocol) -> dict[str, object]:
    """The settings where ``protocol`` departs from its own preset (overrides a spec made).

    >>> differs_from_preset(protocol_from_preset("pvsst_reference", vote_sampling="streams"))
    {'vote_sampling': 'streams'}
    """
    base = protocol_from_preset(protocol.preset)
    return {name: getattr(protocol, name) for name in setting_names()
            if name != "materials" and getattr(protocol, name) != getattr(base, name)}
