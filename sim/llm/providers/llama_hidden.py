"""Hidden states of a llama.cpp model: the output of chosen transformer blocks for every prompt token.

:class:`HiddenStateReader` opens a second llama.cpp context on the weights the embedded provider
already holds (no second copy of the model) with an evaluation callback. llama.cpp calls it for every
tensor of the compute graph, first asking whether the tensor is wanted, then with its data; the
reader copies the tensors named ``l_out-<i>`` (the residual stream after block ``i``, shape
``(n_embd, n_tokens)``), which are what a control vector for layer ``i`` is added to
(:mod:`pvsst.sim.llm.providers.llama_cvec`). Every token of the batch is marked as an output, so
llama.cpp does not prune the last block to the last token. The callback only reads: logits are the same
as without it.

llama-cpp-python does not wrap ggml's tensor functions; they are called with ctypes from the
``libggml-base`` library llama-cpp-python ships.
"""
from __future__ import annotations

import ctypes
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pvsst.sim.llm.providers.llama_library import llama_library

LAYER_OUTPUT = "l_out-"
"""Name prefix of a block's output tensor in llama.cpp's graph (``l_out-12``)."""
_GGML_TYPE_F32 = 0
_NE_OFFSET = 16  # struct ggml_tensor: enum ggml_type type; (pad); ggml_backend_buffer * buffer; int64_t ne[4]
_GGML: ctypes.CDLL | None = None


def _ggml() -> ctypes.CDLL:
    global _GGML
    if _GGML is None:
        lib = ctypes.CDLL(str(Path(llama_library().__file__).parent / "lib" / "libggml-base.so"))
        lib.ggml_get_name.restype = ctypes.c_char_p
        lib.ggml_get_name.argtypes = [ctypes.c_void_p]
        lib.ggml_nbytes.restype = ctypes.c_size_t
        lib.ggml_nbytes.argtypes = [ctypes.c_void_p]
        lib.ggml_backend_tensor_get.restype = None
        lib.ggml_backend_tensor_get.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t]
        _GGML = lib
    return _GGML


def model_shape(llama: Any) -> tuple[int, int]:
    """``(n_layer, n_embd)`` of a ``llama_cpp.Llama``'s model (30 and 576 for SmolLM2-135M)."""
    llama_cpp = llama_library()
    return (int(llama_cpp.llama_model_n_layer(llama.model)), int(llama_cpp.llama_model_n_embd(llama.model)))


class HiddenStateReader:
    """Reads the outputs of ``layers`` (block numbers) while a second context evaluates a prompt.

    Parameters
    ----------
    llama
        The ``llama_cpp.Llama`` whose weights are shared; its context settings (threads, batch sizes,
        context length) are copied.
    layers
        Block numbers ``0 .. n_layer - 1`` to read.

    Examples
    --------
    >>> from pvsst.sim.llm.providers import embedded
    >>> llama = embedded.load_model()  # doctest: +SKIP
    >>> with HiddenStateReader(llama, [10, 11]) as reader:  # doctest: +SKIP
    ...     states = reader.read(llama.tokenize(b"Hello there", add_bos=False))
    >>> states.shape  # doctest: +SKIP
    (2, 2, 576)
    """

    def __init__(self, llama: Any, layers: Sequence[int]):
        llama_cpp = llama_library()
        _internals = llama_cpp._internals
        self.n_layer, self.n_embd = model_shape(llama)
        self.layers = tuple(int(layer) for layer in layers)
        if not self.layers or any(not 0 <= layer < self.n_layer for layer in self.layers):
            raise ValueError(f"layers must lie in 0..{self.n_layer - 1}, got {list(self.layers)}")
        self._wanted = {f"{LAYER_OUTPUT}{layer}".encode(): index for index, layer in enumerate(self.layers)}
        self._pieces: list[list[np.ndarray]] = [[] for _ in self.layers]
        self._lib = _ggml()
        # ctypes keeps no reference to a callback it hands to C: the reader holds it (and the
        # parameters) for the context's whole life, or the next evaluation calls freed memory.
        self._callback = llama_cpp.ggml_backend_sched_eval_callback(self._on_tensor)
        params = llama_cpp.llama_context_default_params()
        for name, _ in llama_cpp.llama_context_params._fields_:
            setattr(params, name, getattr(llama.context_params, name))
        params.cb_eval = self._callback
        params.cb_eval_user_data = None
        self._params = params
        self.n_batch = int(params.n_batch)
        self.n_ctx = int(params.n_ctx)
        self._context = _internals.LlamaContext(model=llama._model, params=params, verbose=False)
        self._batch = _internals.LlamaBatch(n_tokens=self.n_batch, embd=0, n_seq_max=1, verbose=False)
        self._lock = threading.Lock()
        self._error: str | None = None

    def _on_tensor(self, tensor: int, ask: bool, _user_data: Any) -> bool:
        index = self._wanted.get(self._lib.ggml_get_name(tensor))
        if ask:
            return index is not None
        if index is None:
            return True
        kind = ctypes.c_int32.from_address(tensor).value
        ne = (ctypes.c_int64 * 4).from_address(tensor + _NE_OFFSET)
        nbytes = self._lib.ggml_nbytes(tensor)
        if kind != _GGML_TYPE_F32 or nbytes != ne[0] * ne[1] * 4 or ne[0] != self.n_embd:
            self._error = f"tensor {LAYER_OUTPUT}{self.layers[index]} is not a contiguous f32 (n_embd, n_tokens) array"
            return False  # stops the evaluation; read() raises
        out = np.empty((ne[1], ne[0]), dtype=np.float32)
        self._lib.ggml_backend_tensor_get(tensor, out.ctypes.data, 0, nbytes)
        self._pieces[index].append(out)
        return True

    @property
    def context(self) -> Any:
        """The second context's ``llama_context`` pointer."""
        return self._context.ctx

    def read(self, tokens: Sequence[int]) -> np.ndarray:
        """Evaluate ``tokens`` from an empty context; the outputs of the reader's layers, float32 of
        shape ``(len(layers), len(tokens), n_embd)``."""
        tokens = [int(t) for t in tokens]
        if not tokens:
            raise ValueError("no tokens to evaluate")
        if len(tokens) > self.n_ctx:
            raise ValueError(f"{len(tokens)} tokens do not fit the context ({self.n_ctx})")
        with self._lock:
            self._context.kv_cache_clear()
            self._pieces = [[] for _ in self.layers]
            self._error = None
            for start in range(0, len(tokens), self.n_batch):
                piece = tokens[start:start + self.n_batch]
                self._batch.set_batch(piece, n_past=start, logits_all=True)
                try:
                    self._context.decode(self._batch)
                except RuntimeError as err:
                    raise RuntimeError(self._error or str(err)) from err
            states = np.stack([np.concatenate(pieces, axis=0) for pieces in self._pieces])
        if states.shape[1] != len(tokens):
            raise RuntimeError(f"read {states.shape[1]} positions for {len(tokens)} tokens")
        return states

    def close(self) -> None:
        """Free the second context (the shared weights stay)."""
        self._batch.close()
        self._context.close()

    def __enter__(self) -> "HiddenStateReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
