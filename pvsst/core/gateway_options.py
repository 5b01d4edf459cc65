"""The command-line options that override the gateway configuration: one table, read by every command.

Each row is one option: its flag, the :class:`~pvsst.sim.llm.config.GatewayConfig` field it sets (with
that field's default and bounds), the type of its value and its help. The run commands (``pvsst run``,
``pvsst survey run``, ``pvsst simulate``, ``pvsst judge``, ``pvsst llm complete``) take their gateway
options from it (:func:`pvsst.experiments.cli.gateway_options.gateway_options`), and a run's resume line
gives the same options again (:func:`pvsst.experiments.run.run_guard.gateway_words`).

Examples
--------
>>> [option.flag for option in GATEWAY_OPTIONS]
['--max-concurrency', '--requests-per-minute', '--request-timeout', '--api-base', '--structured-output']
>>> option_of("request_timeout_s").flag
'--request-timeout'
"""
from __future__ import annotations

from dataclasses import dataclass

from pvsst.core.defaults import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_TIMEOUT_S,
    STRUCTURED_OUTPUT_AUTO,
    STRUCTURED_OUTPUT_MODES,
)


@dataclass(frozen=True)
class GatewayOption:
    """One command-line option of the gateway: ``flag`` sets the configuration's ``field``."""

    flag: str
    field: str
    type: type
    help: str


GATEWAY_OPTIONS = (
    GatewayOption("--max-concurrency", "max_concurrency", int, "Model calls in flight per worker (default: the "
                  f"document's execution.max_concurrency, else {DEFAULT_MAX_CONCURRENCY})."),
    GatewayOption("--requests-per-minute", "requests_per_minute", int, "Pace the calls of each worker to this many "
                  "per minute (default: the document's, else unpaced)."),
    GatewayOption("--request-timeout", "request_timeout_s", float, "Per-try timeout of a model call in seconds "
                  f"(default: the document's, else {DEFAULT_TIMEOUT_S:g})."),
    GatewayOption("--api-base", "api_base", str, "One OpenAI-compatible model server (vLLM, Ollama, llama.cpp) for "
                  "litellm models; endpoints come only from the document."),
    GatewayOption("--structured-output", "structured_output", str, "How a reply's JSON is asked for, for every "
                  f"model: {', '.join((*STRUCTURED_OUTPUT_MODES, STRUCTURED_OUTPUT_AUTO))} (default: the document's)."),
)
"""Every gateway option, in the order a command's help lists them."""


def option_of(field: str) -> GatewayOption:
    """The option that sets the configuration field ``field``."""
    return next(option for option in GATEWAY_OPTIONS if option.field == field)
