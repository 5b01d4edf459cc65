"""Structured output: pull a JSON value out of a model reply and validate it against a JSON schema."""
from __future__ import annotations

import functools
import json
import re
from typing import Any

import fastjsonschema
import jsonschema

from pvsst.core.errors import InputError
from pvsst.sim.llm.types import STATUS_EMPTY, STATUS_OK, STATUS_PARSE_ERROR, canonical_json
from pvsst.sim.replies import lenient_json_object

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()


def extract_json(text: str) -> Any:
    """The JSON value in ``text``: the whole text, a fenced ```json block, or the first JSON object.

    Raises ``ValueError`` when there is none.

    Examples
    --------
    >>> extract_json('Sure! ```json\\n{"a": 1}\\n``` done')
    {'a': 1}
    >>> extract_json('Here it is: {"a": [1, 2]} -- hope that helps')
    {'a': [1, 2]}
    """
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    for block in _FENCE.findall(stripped):
        try:
            return json.loads(block.strip())
        except ValueError:
            continue
    for start, char in enumerate(stripped):
        if char in "{[":
            try:
                value, _ = _DECODER.raw_decode(stripped, start)
                return value
            except ValueError:
                continue
    raise ValueError("no JSON value in the reply")


@functools.lru_cache(maxsize=256)
def _validator_for(schema_json: str) -> jsonschema.protocols.Validator:
    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


@functools.lru_cache(maxsize=256)
def _fast_validator(schema_json: str) -> Any:
    """A compiled fastjsonschema validator (microseconds per reply), or None if it cannot compile the
    schema; jsonschema stays the reference and explains every rejection."""
    try:
        return fastjsonschema.compile(json.loads(schema_json))
    except Exception:  # noqa: BLE001 - an unsupported keyword just means the slow path
        return None


def check_schema(schema: Any, source: str = "schema") -> None:
    """Raise ``InputError`` if ``schema`` is not a valid JSON schema (an object)."""
    if not isinstance(schema, dict):
        raise InputError(source, "schema", "a JSON schema must be a JSON object")
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as err:
        raise InputError(source, "schema", f"invalid JSON schema: {err.message}") from err


def parse_reply(text: str | None, schema: dict[str, Any] | None) -> tuple[Any, str, str]:
    """Parse and validate one reply: ``(parsed, status, problem)``.

    ``status`` is ``ok``, ``empty`` (no text) or ``parse_error`` (no JSON, or JSON not valid under
    ``schema``); ``parsed`` is ``None`` unless ok; ``problem`` says what was wrong. Without a schema the
    text itself is the answer and ``parsed`` is ``None``.

    Examples
    --------
    >>> schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    >>> parse_reply('{"n": 3}', schema)
    ({'n': 3}, 'ok', '')
    >>> parse_reply('{"n": "x"}', schema)[1]
    'parse_error'
    """
    if text is None or not text.strip():
        return None, STATUS_EMPTY, "empty reply"
    if schema is None:
        return None, STATUS_OK, ""
    try:
        value = extract_json(text)
    except ValueError as err:
        return None, STATUS_PARSE_ERROR, str(err)
    schema_json = canonical_json(schema)
    fast = _fast_validator(schema_json)
    if fast is not None:
        try:
            fast(value)
            return value, STATUS_OK, ""
        except fastjsonschema.JsonSchemaException:
            pass  # let jsonschema name the problem
    error = jsonschema.exceptions.best_match(_validator_for(schema_json).iter_errors(value))
    if error is not None:
        return None, STATUS_PARSE_ERROR, f"reply not valid under the schema: {error.message[:200]}"
    return value, STATUS_OK, ""


def parse_lenient(text: str | None) -> tuple[Any, str, str]:
    """The reference implementation's parse: any JSON object in the (stripped) reply, no schema.

    Examples
    --------
    >>> parse_lenient('noise {"votes": [1, 0]} noise')
    ({'votes': [1, 0]}, 'ok', '')
    >>> parse_lenient('[1, 0]')[1], parse_lenient('  ')[1]
    ('parse_error', 'empty')
    """
    if text is None or not text.strip():
        return None, STATUS_EMPTY, "empty reply"
    value = lenient_json_object(text.strip())
    if value is None:
        return None, STATUS_PARSE_ERROR, "no JSON object in the reply"
    return value, STATUS_OK, ""
