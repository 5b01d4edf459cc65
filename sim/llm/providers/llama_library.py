"""llama-cpp-python, the embedded model's library: imported once, when the embedded model first runs.

It is the optional ``local`` extra (``pip install 'pvsst[local]'``), so no module imports it at its top:
the provider modules call :func:`llama_library` and use what it returns (``llama_cpp.Llama``, its
``llama_cpp.llama_cpp`` bindings, ``llama_cpp._internals``, ``llama_cpp.llama_chat_format``: the package
imports them all).
"""
from __future__ import annotations

import functools
import os
from types import ModuleType


@functools.cache
def llama_library() -> ModuleType:
    """The ``llama_cpp`` package (``ImportError`` where the extra is not installed)."""
    # llama.cpp's OpenMP workers spin while waiting by default; with several threads on a busy machine
    # that made generation ~15x slower (see embedded.N_THREADS). Must be set before the import.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import llama_cpp  # lazy: the optional local extra; only the embedded model needs it

    return llama_cpp
