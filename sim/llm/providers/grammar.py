"""JSON schemas rewritten for grammar-constrained decoding (llama.cpp), so every reply is valid and closes.

Two rewrites, applied to the schema the grammar is built from (replies are still validated against
the original schema):

* :func:`grammar_schema`: llama.cpp's grammar cannot express numeric ranges, so a bounded number or
  integer becomes an ``enum``.
* :func:`bound_free_strings`: a decoder that runs out of tokens inside a string returns JSON that
  never closes. Each string without ``maxLength`` (and without ``enum``, ``const``, ``pattern`` or
  ``format``) is decoded as at most N printable ASCII characters other than ``"`` and backslash
  (:data:`FREE_CHARACTERS`), N leaving room within the token limit for the rest of the reply. Each such
  character is one byte, and a byte-level BPE vocabulary (SmolLM2's) holds every byte as a token, so
  the string costs at most N tokens and the reply always closes. (Unrestricted, the model wrote emoji
  of several tokens each, and raw line breaks, which are not valid inside a JSON string.) Strings
  whose ``maxLength`` the schema sets keep it and are decoded from the same characters (measured on
  the engine's post schema: the model fell into runs of emoji, 2-3 tokens each, and every such reply
  was cut at the token limit); a reply cut at the limit anyway gets status ``truncated`` in the
  gateway, never a success.

Examples
--------
>>> schema = {"type": "object", "properties": {"post": {"type": "string"},
...           "side": {"enum": ["support", "oppose"]}}, "required": ["post", "side"]}
>>> post = bound_free_strings(schema, 120)["properties"]["post"]
>>> post["maxLength"], post["pattern"] == "^" + FREE_CHARACTERS + "{0,79}$"
(79, True)
>>> worst_case_chars(bound_free_strings(schema, 120)) + DECODER_MARGIN <= 120
True
"""
from __future__ import annotations

import json
import math
from typing import Any

GRID_POINTS = 101  # a bounded number is decoded as one of this many evenly spaced values

FREE_CHARACTERS = r"[ !#-\[\]-~]"
"""The characters a free string is decoded from: printable ASCII (0x20-0x7E) except the quote and backslash."""

DECODER_MARGIN = 4
"""Tokens held back from the string budget: the end-of-sequence token and a small reserve."""

# Longest text llama.cpp's grammar lets each primitive take (its PRIMITIVE_RULES: up to 16 digits per
# integral and decimal part, an exponent), each followed by one optional space.
_PRIMITIVE_CHARS = {"boolean": 5, "null": 4, "integer": 17, "number": 17 + 1 + 16 + 2 + 16}
_SPACE = 1  # llama.cpp's rule `space ::= " "?`


def grammar_schema(schema: Any) -> Any:
    """``schema`` rewritten for llama.cpp's grammar, which cannot express numeric ranges: a number or
    integer with both bounds becomes an ``enum`` (integers: every value when there are at most
    ``GRID_POINTS``; numbers: ``GRID_POINTS`` evenly spaced values, 2 decimals for a unit range).
    Replies are still validated against the original schema.

    Examples
    --------
    >>> grammar_schema({"type": "number", "minimum": 0, "maximum": 1})["enum"][:3]
    [0.0, 0.01, 0.02]
    >>> grammar_schema({"type": "integer", "minimum": -1, "maximum": 1})
    {'enum': [-1, 0, 1]}
    """
    if isinstance(schema, list):
        return [grammar_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if kind in ("number", "integer") and "minimum" in schema and "maximum" in schema and "enum" not in schema:
        low, high = schema["minimum"], schema["maximum"]
        if kind == "integer" and high - low + 1 <= GRID_POINTS:
            return {"enum": list(range(int(low), int(high) + 1))}
        if kind == "number" and high > low:
            step = (high - low) / (GRID_POINTS - 1)
            decimals = max(0, -int(math.floor(math.log10(step))))
            return {"enum": sorted({round(low + i * step, decimals) for i in range(GRID_POINTS)})}
    return {key: grammar_schema(value) for key, value in schema.items()}


def _is_plain_string(schema: Any) -> bool:
    """A string the grammar may fill with any text (no enum, const, pattern or format)."""
    return (isinstance(schema, dict) and schema.get("type") == "string"
            and not any(key in schema for key in ("enum", "const", "pattern", "format")))


def _is_free_string(schema: Any) -> bool:
    return _is_plain_string(schema) and "maxLength" not in schema


def _count_free_strings(schema: Any) -> int:
    if _is_free_string(schema):
        return 1
    if isinstance(schema, dict):
        return sum(_count_free_strings(value) for key, value in schema.items() if key != "enum" and key != "const")
    if isinstance(schema, list):
        return sum(_count_free_strings(item) for item in schema)
    return 0


def worst_case_chars(schema: Any, free_string_chars: int = 0) -> float:
    """The longest JSON text llama.cpp's grammar for ``schema`` admits, in characters (``math.inf``
    when unbounded); a string without ``maxLength`` counts ``free_string_chars`` characters.

    Examples
    --------
    >>> worst_case_chars({"enum": ["yes", "no"]}), worst_case_chars({"type": "string", "maxLength": 10})
    (6, 13)
    >>> worst_case_chars({"type": "array", "items": {"type": "boolean"}})
    inf
    """
    if not isinstance(schema, dict):
        return math.inf
    if "const" in schema:
        return len(json.dumps(schema["const"])) + _SPACE
    if "enum" in schema:
        return max(len(json.dumps(value)) for value in schema["enum"]) + _SPACE
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return max(worst_case_chars(option, free_string_chars) for option in options)
    kind = schema.get("type")
    if isinstance(kind, list):
        return max(worst_case_chars({**schema, "type": one}, free_string_chars) for one in kind)
    if kind == "string":
        if "format" in schema or ("pattern" in schema and "maxLength" not in schema):
            return math.inf
        return 2 + schema.get("maxLength", free_string_chars) + _SPACE
    if kind in _PRIMITIVE_CHARS:
        return _PRIMITIVE_CHARS[kind] + _SPACE
    if kind == "object" and "properties" in schema and schema.get("additionalProperties") in (None, False):
        members = [len(json.dumps(name)) + _SPACE + 1 + _SPACE + worst_case_chars(value, free_string_chars)
                   for name, value in schema["properties"].items()]
        return 1 + _SPACE + sum(members) + (1 + _SPACE) * max(0, len(members) - 1) + 1 + _SPACE
    if kind == "array" and isinstance(schema.get("items"), dict) and "maxItems" in schema:
        item = worst_case_chars(schema["items"], free_string_chars)
        n = schema["maxItems"]
        return 1 + _SPACE + n * item + (1 + _SPACE) * max(0, n - 1) + 1 + _SPACE
    return math.inf


def _printable_strings(schema: Any, free_length: int | None) -> Any:
    """Every plain string decoded from :data:`FREE_CHARACTERS`, up to its ``maxLength``; a free string
    (no ``maxLength``) gets ``free_length`` as its ``maxLength`` (``None``: left as it is)."""
    if _is_plain_string(schema) and ("maxLength" in schema or free_length is not None):
        low = int(schema.get("minLength", 0))
        high = max(int(schema.get("maxLength", free_length)), low)
        bounded = schema if "maxLength" in schema else {**schema, "maxLength": high}
        return {**bounded, "pattern": f"^{FREE_CHARACTERS}{{{low},{high}}}$"}
    if isinstance(schema, dict):
        return {key: value if key in ("enum", "const") else _printable_strings(value, free_length)
                for key, value in schema.items()}
    if isinstance(schema, list):
        return [_printable_strings(item, free_length) for item in schema]
    return schema


def bound_free_strings(schema: Any, max_tokens: int) -> Any:
    """``schema`` with a ``maxLength`` on every free string, so that the whole reply fits ``max_tokens``.

    The tokens left after the rest of the reply (its worst-case length, see :func:`worst_case_chars`)
    and :data:`DECODER_MARGIN` are shared equally among the free strings. A schema whose other parts
    are unbounded (an array without ``maxItems``) is returned unchanged: no bound can make it close.

    Examples
    --------
    >>> bound_free_strings({"type": "object", "properties": {"a": {"type": "string"},
    ...                     "b": {"type": "string", "maxLength": 5}}}, 60)["properties"]["a"]["maxLength"]
    27
    >>> bound_free_strings({"type": "string", "maxLength": 500}, 60)["pattern"] == "^" + FREE_CHARACTERS + "{0,500}$"
    True
    """
    free = _count_free_strings(schema)
    rest = worst_case_chars(schema, free_string_chars=0) if free else math.inf
    if rest == math.inf:  # no free string, or no bound can make the reply close: bounded strings only
        return _printable_strings(schema, None)
    share = int((max_tokens - DECODER_MARGIN - rest) // free)
    return _printable_strings(schema, max(share, 0))
