"""Reuse of a prompt prefix the llama.cpp context already holds, with the numbers of a fresh evaluation.

llama-cpp-python keeps the KV cache of the last prompt and, asked for a new one, evaluates only what
follows the tokens the two share. Its reuse changes numbers in one case: llama.cpp's CPU kernels compute
each token of a batch independently of how many tokens the batch holds, as long as it holds two or more,
but a single token takes another kernel (a matrix-vector product) whose sums round differently. A
prompt equal to the last one (a retry with another seed) would have its last token evaluated alone, and
a prefix that reaches into the last reply reuses tokens that were generated one at a time.

:func:`install` wraps ``Llama.generate`` on one instance so that a call reuses only positions the
previous call evaluated as a batch (its prompt, never its reply), always leaves two or more tokens to
evaluate, and reuses nothing for a prompt longer than one batch (``n_batch``: llama.cpp would cut the
fresh evaluation into batches at other places). A reply is then the same, bit for bit, whether or not
the context held a prefix, which ``tests/sim/test_prompt_reuse.py`` checks against fresh evaluations.
``PVSST_LLAMA_PROMPT_REUSE=0`` turns it off (every call starts from an empty context).

Measured on the embedded engine trials' calls: consecutive prompts share the system text, the topic
and the start of the persona lines, about a fifth of a 250-token prompt.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

_STATE = "_pvsst_prompt_reuse"


def enabled() -> bool:
    return os.environ.get("PVSST_LLAMA_PROMPT_REUSE", "1") != "0"


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading items ``a`` and ``b`` share.

    Examples
    --------
    >>> common_prefix([1, 2, 3, 4], [1, 2, 5]), common_prefix([], [1]), common_prefix([7], [7])
    (2, 0, 1)
    """
    count = 0
    for x, y in zip(a, b):
        if x != y:
            break
        count += 1
    return count


def reusable(held: Sequence[int], batch_prompt: Sequence[int], tokens: Sequence[int], n_batch: int) -> int:
    """How many leading tokens of ``tokens`` may be taken from a context that holds ``held``, whose first
    ``len(batch_prompt)`` positions were evaluated as a batch from ``batch_prompt``.

    Examples
    --------
    >>> reusable(held=[1, 2, 3, 9, 9], batch_prompt=[1, 2, 3], tokens=[1, 2, 3, 4, 5], n_batch=512)
    3
    >>> reusable(held=[1, 2, 3, 9], batch_prompt=[1, 2, 3], tokens=[1, 2, 3], n_batch=512)  # a retry: 2 left
    1
    >>> reusable(held=[1, 2, 3, 9], batch_prompt=[1, 2, 3], tokens=[1, 2, 3, 9, 8, 7], n_batch=512)
    3
    >>> reusable(held=[1, 2, 3], batch_prompt=[1, 2, 3], tokens=[1, 2, 3, 4, 5], n_batch=4)  # over a batch
    0
    """
    if len(tokens) > n_batch:
        return 0
    shared = common_prefix(list(held[:len(batch_prompt)]), list(batch_prompt))
    shared = common_prefix(list(batch_prompt[:shared]), list(tokens))
    return max(0, min(shared, len(tokens) - 2))


def install(llama: Any) -> None:
    """Wrap ``llama.generate`` (this instance only) to reuse the held prompt prefix as described above."""
    if not enabled() or getattr(llama, _STATE, None) is not None:
        return
    state = {"prompt": [], "reused": 0}
    setattr(llama, _STATE, state)
    original = llama.generate

    def generate(tokens, *args, reset: bool = True, **kwargs):
        tokens = list(tokens)
        if reset:
            held = list(llama.input_ids[: llama.n_tokens])
            keep = reusable(held, state["prompt"], tokens, int(llama.n_batch))
            # generate() matches the held tokens against the prompt itself: holding exactly the reusable
            # prefix makes it evaluate the rest (two tokens or more) as one batch; holding none resets.
            llama.n_tokens = keep
            state["reused"] += keep
        state["prompt"] = tokens
        return original(tokens, *args, reset=reset, **kwargs)

    llama.generate = generate


def active(llama: Any) -> bool:
    """Whether :func:`install` wrapped this instance."""
    return getattr(llama, _STATE, None) is not None


def forget(llama: Any) -> None:
    """Call before using the context other than through ``generate`` (its positions change meaning)."""
    state = getattr(llama, _STATE, None)
    if state is not None:
        state["prompt"] = []


def reused_tokens(llama: Any) -> int:
    """Prompt tokens this instance took from its context instead of evaluating them (0 when not installed)."""
    state = getattr(llama, _STATE, None)
    return int(state["reused"]) if state is not None else 0
