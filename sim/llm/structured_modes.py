"""How a request asks a served model for structured output, and ``auto``: the mode each server accepts.

Servers differ in the ``response_format`` they accept. llama-cpp-python's OpenAI-compatible server
takes ``{"type": "json_object", "schema": ...}`` but rejects ``json_schema``; vLLM takes both; some
servers take only plain JSON mode, some nothing at all. The modes, strictest first:

``json_schema``  ``{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}`` (OpenAI's form)
``json_object``  ``{"type": "json_object", "schema": schema}`` (llama.cpp's grammar from the schema;
                 bounded numbers become enums, as for the embedded model)
``json_mode``    ``{"type": "json_object"}``: some JSON, no schema
``none``         no ``response_format``: the reply is validated after the fact (as with every mode)

``auto`` starts at ``json_schema`` and, when a server rejects a mode with a client error, moves that
(model, endpoint) pair to the next mode, once; the mode that served is recorded with every call.
``auto`` is the default of every served model (:func:`default_setting`): a server that takes
``json_schema`` pays nothing for it, one that does not is learned once per endpoint. The in-process
models (``embedded/``, ``scripted/``) take ``json_schema`` as it is.
"""
from __future__ import annotations

import threading
from typing import Any

from pvsst.core.defaults import STRUCTURED_OUTPUT_AUTO, STRUCTURED_OUTPUT_MODES
from pvsst.sim.llm.providers.grammar import grammar_schema

MODES = STRUCTURED_OUTPUT_MODES
AUTO = STRUCTURED_OUTPUT_AUTO
SETTINGS = (*MODES, AUTO)
IN_PROCESS_PREFIXES = ("embedded", "scripted")
"""Model prefixes served in this process: they take ``json_schema`` and need no probing."""


def default_setting(model: str) -> str:
    """The structured-output setting of ``model`` when none is given: ``auto`` for a served model,
    ``json_schema`` for an in-process one (:data:`IN_PROCESS_PREFIXES`).

    Examples
    --------
    >>> default_setting("openai/smollm2"), default_setting("embedded/smollm2-135m"), default_setting("scripted/echo")
    ('auto', 'json_schema', 'json_schema')
    """
    return MODES[0] if model.split("/", 1)[0] in IN_PROCESS_PREFIXES else AUTO


def response_format_for(schema: dict[str, Any] | None, mode: str = "json_schema") -> dict[str, Any] | None:
    """The ``response_format`` of ``mode`` for ``schema`` (``None``: send none).

    Examples
    --------
    >>> schema = {"type": "object"}
    >>> response_format_for(schema)["type"], response_format_for(schema, "json_object")
    ('json_schema', {'type': 'json_object', 'schema': {'type': 'object'}})
    >>> response_format_for(schema, "json_mode"), response_format_for(schema, "none"), response_format_for(None)
    ({'type': 'json_object'}, None, None)
    """
    if schema is None or mode == "none":
        return None
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema, "strict": True}}
    if mode == "json_object":
        return {"type": "json_object", "schema": grammar_schema(schema)}  # llama.cpp cannot bound numbers: enums
    if mode == "json_mode":
        return {"type": "json_object"}
    raise ValueError(f"unknown structured-output mode {mode!r} (known: {', '.join(MODES)})")


class StructuredModes:
    """The structured-output mode per (model, endpoint): fixed by setting, or learned under ``auto``.

    Parameters
    ----------
    settings
        ``{model: mode or "auto"}``; models not named use ``default``.
    default
        The setting of every other model (``None``: :func:`default_setting` of each).

    Examples
    --------
    >>> modes = StructuredModes({"openai/m": "auto"}, default="json_schema")
    >>> modes.mode_for("openai/m", "http://a"), modes.mode_for("openai/x", "http://a")
    ('json_schema', 'json_schema')
    >>> modes.reject("openai/m", "http://a", "json_schema"), modes.mode_for("openai/m", "http://a")
    (True, 'json_object')
    >>> modes.reject("openai/x", "http://a", "json_schema")   # a fixed mode is never changed
    False
    >>> modes.mode_for("openai/m", "http://b")                # another endpoint learns on its own
    'json_schema'
    """

    def __init__(self, settings: dict[str, str] | None = None, default: str | None = None):
        self.settings = dict(settings or {})
        self.default = default
        for value in (*self.settings.values(), *([default] if default is not None else [])):
            if value not in SETTINGS:
                raise ValueError(f"unknown structured_output {value!r} (known: {', '.join(SETTINGS)})")
        self._learned: dict[tuple[str, str], str] = {}
        self._confirmed: set[tuple[str, str]] = set()
        self.version = 0  # bumped whenever auto moves a pair to another mode
        self._lock = threading.Lock()  # litellm runs deployment hooks on its own threads at times

    def setting(self, model: str) -> str:
        if model in self.settings:
            return self.settings[model]
        return self.default if self.default is not None else default_setting(model)

    def mode_for(self, model: str, endpoint: str | None) -> str:
        """The mode to send to ``endpoint`` for ``model`` now."""
        setting = self.setting(model)
        if setting != AUTO:
            return setting
        with self._lock:
            return self._learned.get((model, endpoint or ""), MODES[0])

    def reject(self, model: str, endpoint: str | None, mode: str) -> bool:
        """``endpoint`` rejected ``mode`` with a client error: move an ``auto`` model to the next mode.

        Returns True when the next try should use another mode (False: fixed setting, or ``none``
        was rejected too, so the rejection is the request's own fault, not the format's).
        """
        if self.setting(model) != AUTO or mode not in MODES:
            return False
        key = (model, endpoint or "")
        with self._lock:
            current = self._learned.get(key, MODES[0])
            if MODES.index(current) > MODES.index(mode):
                return True  # a concurrent call already moved past it: try again with the newer mode
            if mode == MODES[-1]:
                return False
            self._learned[key] = MODES[MODES.index(mode) + 1]
            self.version += 1
            return True

    def settled(self, model: str, endpoint: str | None) -> bool:
        """Whether a mode is known to work for this pair (always, for a fixed setting)."""
        return self.setting(model) != AUTO or (model, endpoint or "") in self._confirmed

    def confirm(self, model: str, endpoint: str | None) -> None:
        """A reply came back in the current mode: ``auto`` stops probing this pair."""
        self._confirmed.add((model, endpoint or ""))

    def learned(self) -> dict[str, str]:
        """``{"model @ endpoint": mode}`` of every pair ``auto`` has moved off ``json_schema``."""
        with self._lock:
            return {f"{model} @ {endpoint}": mode for (model, endpoint), mode in sorted(self._learned.items())}
