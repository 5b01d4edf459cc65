"""Which model strings pvsst can run, and their registration with litellm's ``custom_provider_map``.

Model strings are ``<provider>/<name>``: ``embedded/smollm2-135m`` and ``scripted/<name>`` are ours;
any litellm provider prefix (``openai/``, ``ollama/``, ``hosted_vllm/``, ...) passes through to
litellm with ``api_base`` and keys from the environment.
"""
from __future__ import annotations

import functools
import importlib.util
import logging
import os
import threading
from dataclasses import dataclass
from types import ModuleType

from pvsst.core.errors import InputError
from pvsst.sim.llm.providers import embedded, scripted
from pvsst.sim.llm.providers.scripted import SCRIPTED_PROVIDERS

OUR_PREFIXES = ("embedded", "scripted")
_SETUP_LOCK = threading.Lock()
_LITELLM: ModuleType | None = None


@dataclass(frozen=True)
class ProviderInfo:
    """One row of ``pvsst models``: a provider, its kind, whether it can run here, and why."""

    name: str
    kind: str
    runnable: bool
    detail: str


def import_litellm() -> ModuleType:
    """Import litellm (offline cost map, quiet logging) with our providers registered; cached.

    Examples
    --------
    >>> litellm = import_litellm()
    >>> sorted(item["provider"] for item in litellm.custom_provider_map if item["provider"] in OUR_PREFIXES)
    ['embedded', 'scripted']
    """
    global _LITELLM
    if _LITELLM is not None:
        return _LITELLM
    with _SETUP_LOCK:
        if _LITELLM is None:
            # pvsst.sim.llm (the parent package) has pointed litellm at its packaged cost map.
            # lazy: litellm takes seconds to import; only a model call needs it
            from pvsst.sim.llm.providers import litellm_adapters

            litellm = litellm_adapters.litellm
            litellm.suppress_debug_info = True
            litellm.set_verbose = False
            for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
                logging.getLogger(name).setLevel(logging.ERROR)
            registered = {item["provider"] for item in litellm.custom_provider_map}
            handlers = {"embedded": litellm_adapters.EmbeddedHandler, "scripted": litellm_adapters.ScriptedHandler}
            for provider, handler in handlers.items():
                if provider not in registered:
                    litellm.custom_provider_map.append({"provider": provider, "custom_handler": handler()})
            _LITELLM = litellm
    return _LITELLM


def split_model(model_name: str) -> tuple[str, str]:
    """``"openai/gpt-4o" -> ("openai", "gpt-4o")``; a bare name has an empty prefix."""
    prefix, sep, name = model_name.partition("/")
    return (prefix, name) if sep else ("", model_name)


@functools.lru_cache(maxsize=4096)
def _model_problem(model_name: str) -> str:
    """What is wrong with ``model_name`` ('' when nothing); cached, so only the first call is costly."""
    if not model_name.strip():
        return "empty model name"
    prefix, name = split_model(model_name)
    if prefix == "embedded":
        return "" if name in embedded.EMBEDDED_MODELS else (
            f"unknown embedded model (known: {', '.join('embedded/' + n for n in embedded.EMBEDDED_MODELS)})")
    if prefix == "scripted":
        return "" if name in SCRIPTED_PROVIDERS else (
            f"unknown scripted provider (known: {', '.join('scripted/' + n for n in sorted(SCRIPTED_PROVIDERS))})")
    litellm = import_litellm()
    if not prefix:
        try:
            litellm.get_llm_provider(model_name)
        except Exception:  # litellm raises various errors for an unmapped bare name
            return "unknown model: give a provider prefix such as openai/, ollama/ or hosted_vllm/"
        return ""
    known = {p.value for p in litellm.LlmProviders} | {str(p) for p in litellm.provider_list}
    known |= {item["provider"] for item in litellm.custom_provider_map}
    if prefix in known:
        return "" if name else "model name missing after the provider prefix"
    return (f"unknown provider prefix '{prefix}/' (neither embedded/, scripted/ nor a litellm provider "
            "such as openai/, ollama/, hosted_vllm/)")


def validate_model_name(model_name: str) -> None:
    """Raise ``InputError("model", model_name, ...)`` unless pvsst or litellm can route ``model_name``.

    Examples
    --------
    >>> validate_model_name("scripted/echo")
    >>> validate_model_name("nosuchprovider/x")
    Traceback (most recent call last):
    ...
    pvsst.core.errors.InputError: model: nosuchprovider/x: unknown provider prefix 'nosuchprovider/' (neither ...)
    """
    problem = _model_problem(str(model_name))
    if problem:
        raise InputError("model", model_name, problem)


def _embedded_info(name: str) -> ProviderInfo:
    try:
        path = embedded.gguf_path(name)
    except InputError as err:
        return ProviderInfo(f"embedded/{name}", "embedded", False, err.problem)
    if not embedded.llama_cpp_available():
        return ProviderInfo(f"embedded/{name}", "embedded", False,
                            f"llama-cpp-python is not installed: {embedded.INSTALL_HINT}")
    size_mb = path.stat().st_size / 1e6
    return ProviderInfo(f"embedded/{name}", "embedded", True, f"{path.name} ({size_mb:.0f} MB), offline")


def _scripted_info(name: str) -> ProviderInfo:
    module_name = SCRIPTED_PROVIDERS[name].partition(":")[0]
    try:
        found = importlib.util.find_spec(module_name) is not None
    except ImportError:
        found = False
    detail = "deterministic, in-process, no language model" if found else f"module {module_name} not installed"
    return ProviderInfo(f"scripted/{name}", "scripted", found, detail)


# Pass-through litellm providers worth listing, with the setting each needs (no network is touched).
_PASSTHROUGH = (
    ("openai/<model>", ("OPENAI_API_KEY",), "OpenAI API"),
    ("anthropic/<model>", ("ANTHROPIC_API_KEY",), "Anthropic API"),
    ("ollama/<model>", ("OLLAMA_API_BASE",), "an Ollama server (or --api-base)"),
    ("hosted_vllm/<model>", ("HOSTED_VLLM_API_BASE",), "a vLLM server (or --api-base)"),
)


def available_providers() -> list[ProviderInfo]:
    """The built-in providers and whether each can run here (no network access, no model loading).

    Examples
    --------
    >>> infos = {info.name: info for info in available_providers()}
    >>> infos["scripted/echo"].runnable
    True
    """
    infos = [_embedded_info(name) for name in embedded.EMBEDDED_MODELS]
    infos += [_scripted_info(name) for name in sorted(SCRIPTED_PROVIDERS)]
    for pattern, env_vars, needs in _PASSTHROUGH:
        present = [v for v in env_vars if os.environ.get(v)]
        detail = f"via litellm; needs {needs}: " + (f"{present[0]} is set" if present else f"set {env_vars[0]}")
        infos.append(ProviderInfo(pattern, "litellm", bool(present), detail))
    return infos


def register_scripted_provider(name: str, target: str) -> None:
    """Add (or replace) scripted provider ``name`` as ``"module:Class"``, imported on first use.

    Examples
    --------
    >>> register_scripted_provider("echo2", "pvsst.sim.llm.providers.scripted:EchoProvider")
    >>> validate_model_name("scripted/echo2")
    """
    if ":" not in target:
        raise InputError("scripted provider", name, f"target must be 'module:Class', got {target!r}")
    SCRIPTED_PROVIDERS[name] = target
    scripted._INSTANCES.pop(name, None)
    _model_problem.cache_clear()
    _runnable_problem.cache_clear()


@functools.lru_cache(maxsize=256)
def _runnable_problem(model_name: str) -> str:
    prefix, name = split_model(model_name)
    if prefix == "embedded":
        info = _embedded_info(name)
        return "" if info.runnable else info.detail
    if prefix == "scripted":
        info = _scripted_info(name)
        return "" if info.runnable else info.detail
    return ""


def ensure_runnable(model_name: str) -> None:
    """Raise ``InputError`` if ``model_name`` is ours and cannot run here (e.g. the embedded model's
    packages are missing: the message says ``pip install 'pvsst[local]'``). Pass-through models are
    only checked by name; whether their server answers is learnt at call time."""
    validate_model_name(model_name)
    problem = _runnable_problem(model_name)
    if problem:
        raise InputError("model", model_name, problem)


def ensure_steerable(model_name: str, steering: object) -> None:
    """Raise ``InputError`` unless ``model_name`` can take identity injection with ``steering`` (a
    :class:`~pvsst.sim.llm.steering.Steering`): an embedded (llama.cpp) model, and vectors measured on
    its model file that hold every layer, attribute and value the steering names. Checked before any call.

    Examples
    --------
    >>> from pvsst.sim.llm.steering import Steering
    >>> ensure_steerable("openai/gpt-4o", Steering(vectors="v.npz", vectors_sha256="0" * 64, attributes=(),
    ...                                            layers=(10,)))
    Traceback (most recent call last):
    ...
    pvsst.core.errors.InputError: model: openai/gpt-4o: identity injection needs a local llama.cpp model ...
    """
    prefix, name = split_model(model_name)
    if prefix != "embedded":
        where = "scripted (no language model)" if prefix == "scripted" else "served elsewhere"
        raise InputError("model", model_name, "identity injection needs a local llama.cpp model (embedded/...); "
                         f"this model is {where}")
    ensure_runnable(model_name)
    embedded.control_rows(name, steering)


def logprobs_problem(model: str) -> str:
    """Why ``model`` cannot give token log-probabilities ('' when it can), checked before any call.

    The embedded model can (llama.cpp scores each option); a scripted provider can when it declares
    ``returns_distributions`` (the survey controls do); a litellm provider can when litellm lists
    ``top_logprobs`` among its supported parameters (OpenAI, vLLM: yes; Ollama, Anthropic: no).

    Examples
    --------
    >>> logprobs_problem("embedded/smollm2-135m"), logprobs_problem("hosted_vllm/my-model")
    ('', '')
    >>> logprobs_problem("ollama/llama3")[:70]
    'provider ollama/ returns no token log-probabilities (litellm lists no '
    """
    prefix, name = split_model(model)
    if prefix == "embedded":
        return ""
    if prefix == "scripted":
        if getattr(scripted.load_scripted_provider(name), "returns_distributions", False):
            return ""
        return f"scripted/{name} returns no option probabilities; use elicitation sample"
    litellm = import_litellm()
    try:
        supported = litellm.get_supported_openai_params(model=name or model, custom_llm_provider=prefix or None) or []
    except Exception:  # litellm raises for providers it cannot map
        supported = []
    if "top_logprobs" in supported:
        return ""
    return (f"provider {prefix or model}/ returns no token log-probabilities (litellm lists no top_logprobs "
            "for it); use elicitation sample or verbalized")
