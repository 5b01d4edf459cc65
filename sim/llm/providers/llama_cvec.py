"""Control vectors on a llama.cpp context: add a vector to the residual stream of chosen layers, per call.

``llama_set_adapter_cvec`` takes one ``n_embd`` row per layer **starting at layer 1**: row ``k`` is added
to the output of block ``k + 1`` (llama.cpp never adds one to block 0). A vector measured at ``l_out-i``
(:mod:`pvsst.sim.llm.providers.llama_hidden`) is therefore written to row ``i - 1``, and is added to
exactly the tensor it was measured at. Layer 0 cannot be steered.

A control vector is state of the context, and the context's KV cache keeps what earlier tokens were
evaluated under: llama-cpp-python reuses a cached prompt prefix, so after a vector change it would answer
from keys and values computed under the old vector. :class:`ScopedControl` therefore starts every
steered call from an empty context and leaves it empty and unsteered, and it must run under the lock
that serializes the context's calls (``embedded._LOCK``), so no vector reaches another call.
"""
from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from pvsst.sim.llm.providers import prompt_reuse
from pvsst.sim.llm.providers.llama_hidden import model_shape
from pvsst.sim.llm.providers.llama_library import llama_library
from pvsst.sim.llm.steering import SCOPES


def set_control_vector(llama: Any, rows: np.ndarray | None, layers: Sequence[int] = (), *,
                       context: Any = None) -> None:
    """Add ``rows[k]`` to the output of block ``layers[k]`` from the next evaluation on; ``rows=None``
    clears the vector. Layers lie in ``1 .. n_layer - 1``. ``context``: another llama.cpp context on
    ``llama``'s model (a :class:`~pvsst.sim.llm.providers.llama_hidden.HiddenStateReader`'s) instead of
    ``llama``'s own."""
    llama_cpp = llama_library()
    n_layer, n_embd = model_shape(llama)
    context = llama.ctx if context is None else context
    if rows is None:
        code = llama_cpp.llama_set_adapter_cvec(context, None, 0, n_embd, 0, 0)
    else:
        layers = [int(layer) for layer in layers]
        if len(layers) != len(rows) or any(not 1 <= layer < n_layer for layer in layers):
            raise ValueError(f"one row per layer in 1..{n_layer - 1}: {len(rows)} rows for layers {layers}")
        buffer = np.zeros((n_layer - 1, n_embd), dtype=np.float32)
        buffer[np.asarray(layers) - 1] = np.asarray(rows, dtype=np.float32)
        code = llama_cpp.llama_set_adapter_cvec(context, buffer.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                                buffer.size, n_embd, min(layers), max(layers))
    if code != 0:
        raise RuntimeError(f"llama_set_adapter_cvec returned {code}")


def _forget_context(llama: Any) -> None:
    llama.reset()
    prompt_reuse.forget(llama)


class ScopedControl:
    """One steered call's vector, switched on and off at the prompt / response boundary by ``scope``.

    Use as a context manager around the call (under the context's lock): on entry the context is
    emptied and the prompt phase's vector set; :meth:`respond` moves to the response phase; on exit
    the vector is cleared and the context emptied again.

    Examples
    --------
    >>> control = ScopedControl(llama=None, rows=None, layers=(), scope="prompt")
    >>> control.phases
    (True, False)
    >>> ScopedControl(llama=None, rows=None, layers=(), scope="response").phases
    (False, True)
    """

    def __init__(self, llama: Any, rows: np.ndarray | None, layers: Sequence[int], scope: str):
        if scope not in SCOPES:
            raise ValueError(f"scope must be one of {SCOPES}, got {scope!r}")
        self.llama, self.rows, self.layers, self.scope = llama, rows, tuple(layers), scope
        self.phases = (scope in ("prompt", "all"), scope in ("response", "all"))  # (prompt on, response on)
        self._on = False

    def _switch(self, on: bool) -> None:
        if on != self._on:
            set_control_vector(self.llama, self.rows if on else None, self.layers)
            self._on = on

    def __enter__(self) -> "ScopedControl":
        _forget_context(self.llama)
        self._switch(self.phases[0])
        return self

    def respond(self) -> None:
        """The prompt is evaluated: tokens from here on are the response's."""
        self._switch(self.phases[1])

    def __exit__(self, *exc: object) -> None:
        try:
            set_control_vector(self.llama, None)
            self._on = False
        finally:
            _forget_context(self.llama)


@contextlib.contextmanager
def response_after_first_eval(llama: Any, control: ScopedControl) -> Iterator[None]:
    """While generating with ``llama.generate``: its first ``eval`` is the prompt (from an empty
    context, in one call), every later one a generated token; switch ``control`` to the response phase
    after the first."""
    own = llama.__dict__.get("eval")  # an instance's own wrapper, if one was installed before
    original = llama.eval
    calls = [0]

    def evaluate(tokens: Sequence[int]) -> None:
        original(tokens)
        calls[0] += 1
        if calls[0] == 1:
            control.respond()

    llama.eval = evaluate
    try:
        yield
    finally:
        if own is None:
            del llama.eval  # the class's method shows again
        else:
            llama.eval = own
