"""Grammar-constrained sampling that asks the grammar about the likeliest tokens first.

llama-cpp-python samples a schema-constrained reply with the chain grammar -> top-k -> typical -> top-p
-> min-p -> temperature -> draw, and the grammar step tests every one of the vocabulary's 49,152 tokens:
measured on one core, 15 ms of the 41 ms each SmolLM2 token took. What is drawn depends only on the
``top_k`` likeliest tokens the grammar allows, so :class:`ScreenedGrammarSampler` tests the K likeliest
tokens (K = 512, then 4,096) and draws from the allowed ones among them whenever that provably leaves the
same candidates as the full test would; otherwise it tests the whole vocabulary. The rest of the chain
and its random draw are llama.cpp's own, so every reply is the same, token for token, as llama-cpp-python's
(``tests/sim/test_screened_grammar.py`` checks it against the library's sampler).

When the screen leaves the same candidates
------------------------------------------
Let ``S`` be the allowed tokens among the K likeliest and ``c`` the lowest logit of those K; an allowed
token outside them has a logit <= ``c``. If ``|S| >= top_k``, the top-k step keeps the same ``top_k``
tokens either way. If ``|S| < top_k``, at most ``u = top_k - |S|`` unseen tokens could join them, with
total weight at most ``u * exp(c)``; top-p keeps the shortest prefix whose share of the weight reaches
``top_p``. When that prefix is the same with no unseen weight and with the most it could be (and with a
hair less weight, against rounding), and it lies inside ``S``, top-p leaves the same tokens either way,
and min-p, temperature and the draw see the same array.

Examples
--------
>>> import numpy as np
>>> same_candidates(np.array([5.0, 1.0]), ceiling=-20.0, top_k=40, top_p=0.95)  # the rest is far below
True
>>> same_candidates(np.array([5.0, 4.9]), ceiling=4.8, top_k=40, top_p=0.95)    # 38 unseen could matter
False
"""
from __future__ import annotations

import ctypes
import math
import os
import types
from typing import Any

import numpy as np

from pvsst.sim.llm.providers.llama_library import llama_library

SCREENS = (512, 4096)
# The screen is exact only for the chain llama-cpp-python builds at these settings (no penalties, no
# mirostat, a positive temperature, no logits processor); any other call keeps the library's sampler.
NEUTRAL = {"repeat_penalty": 1.0, "frequency_penalty": 0.0, "presence_penalty": 0.0, "mirostat_mode": 0}


def same_candidates(allowed_logits: np.ndarray, *, ceiling: float, top_k: int, top_p: float) -> bool:
    """Whether top-k and top-p leave the same tokens from the allowed screened ones (logits
    ``allowed_logits``) as from all allowed tokens, when every unseen one has a logit <= ``ceiling``.

    Examples
    --------
    >>> import numpy as np
    >>> same_candidates(np.arange(40.0), ceiling=-1.0, top_k=40, top_p=0.95)
    True
    """
    n = len(allowed_logits)
    if n == 0:
        return False
    if n >= top_k:
        return True
    logits = np.sort(np.asarray(allowed_logits, dtype=np.float64))[::-1]
    weights = np.exp(logits - logits[0])
    total = weights.sum()
    unseen_at_most = (top_k - n) * math.exp(min(ceiling - logits[0], 0.0))
    cumulative = np.cumsum(weights)

    def kept(extra: float) -> int:
        reached = np.nonzero(cumulative / (total + extra) >= top_p)[0]
        return int(reached[0]) + 1 if len(reached) else n + 1  # n + 1: the cut falls among unseen tokens

    cut = kept(0.0)
    return cut <= n and cut == kept(unseen_at_most * 1.001 + 1e-12) == kept(-total * 1e-6)


class ScreenedGrammarSampler:
    """Stands in for llama-cpp-python's ``LlamaSampler`` chain when a grammar constrains the reply:
    ``sample(ctx, idx)`` returns the token the library's chain would, testing the grammar on the
    likeliest tokens first (see the module docstring)."""

    def __init__(self, llama: Any, grammar: Any, *, top_k: int, top_p: float, min_p: float, typical_p: float,
                 temp: float, seed: int):
        llama_cpp = llama_library()
        _internals = llama_cpp._internals
        self._lib = llama_cpp
        self.n_vocab = llama.n_vocab()
        self.top_k, self.top_p = top_k, top_p
        self.grammar = llama_cpp.llama_sampler_init_grammar(llama._model.vocab, grammar._grammar.encode("utf-8"),
                                                            grammar._root.encode("utf-8"))
        self.rest = _internals.LlamaSampler()  # the library's chain after its grammar step
        self.rest.add_top_k(top_k)
        self.rest.add_typical(typical_p, 1)
        self.rest.add_top_p(top_p, 1)
        self.rest.add_min_p(min_p, 1)
        self.rest.add_temp(temp)
        self.rest.add_dist(seed)
        self._token = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)
        assert self._token.itemsize == ctypes.sizeof(llama_cpp.llama_token_data)
        self.checks = {"screened": 0, "full": 0}

    def _apply(self, sampler: Any, candidates: np.ndarray) -> int:
        array = self._lib.llama_token_data_array(data=candidates.ctypes.data_as(self._lib.llama_token_data_p),
                                                 size=len(candidates), selected=-1, sorted=False)
        self._lib.llama_sampler_apply(sampler, ctypes.byref(array))
        return int(array.selected)

    def _tested(self, logits: np.ndarray, ids: np.ndarray) -> np.ndarray:
        candidates = np.zeros(len(ids), dtype=self._token)
        candidates["id"], candidates["logit"] = ids, logits[ids]
        self._apply(self.grammar, candidates)
        return candidates[np.isfinite(candidates["logit"])]

    def _candidates(self, logits: np.ndarray) -> np.ndarray:
        likeliest = np.argpartition(-logits, SCREENS[-1])[:SCREENS[-1]]
        for size in SCREENS:
            screen = likeliest if size == SCREENS[-1] else likeliest[np.argpartition(-logits[likeliest], size)[:size]]
            screen = np.sort(screen)  # in vocabulary order, as the full array is
            allowed = self._tested(logits, screen)
            if same_candidates(allowed["logit"], ceiling=float(logits[screen].min()), top_k=self.top_k,
                               top_p=self.top_p):
                self.checks["screened"] += 1
                return np.ascontiguousarray(allowed)
        self.checks["full"] += 1
        return self._tested(logits, np.arange(self.n_vocab))

    def sample(self, ctx: Any, idx: int = -1) -> int:
        logits = np.ctypeslib.as_array(self._lib.llama_get_logits_ith(ctx.ctx, idx), shape=(self.n_vocab,))
        candidates = self._candidates(logits)
        token = int(candidates["id"][self._apply(self.rest.sampler, candidates)])
        self._lib.llama_sampler_accept(self.grammar, token)
        self.rest.accept(token)
        return token

    def close(self) -> None:
        if self.grammar is not None:
            self._lib.llama_sampler_free(self.grammar)
            self.grammar = None
        self.rest.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter shutdown the library may be gone
            pass


def install(llama: Any) -> None:
    """Make ``llama`` (a ``llama_cpp.Llama``) sample grammar-constrained replies with
    :class:`ScreenedGrammarSampler`; every other call keeps the library's sampler. ``PVSST_LLAMA_SCREEN=0``
    turns it off."""
    if os.environ.get("PVSST_LLAMA_SCREEN") == "0" or not hasattr(llama, "_init_sampler"):
        return
    library_sampler = llama._init_sampler

    def init_sampler(self: Any, **settings: Any) -> Any:
        grammar = settings.get("grammar")
        plain = all(settings.get(k, v) == v for k, v in NEUTRAL.items())
        if grammar is None or settings.get("logits_processor") is not None or not plain or settings["temp"] <= 0:
            return library_sampler(**settings)
        return ScreenedGrammarSampler(self, grammar, top_k=settings["top_k"], top_p=settings["top_p"],
                                      min_p=settings["min_p"], typical_p=settings["typical_p"],
                                      temp=settings["temp"], seed=self._seed)

    llama._init_sampler = types.MethodType(init_sampler, llama)
