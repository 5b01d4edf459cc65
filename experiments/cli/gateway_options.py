"""The command-line options that override fields of the gateway configuration (``pvsst run``, ``pvsst survey run``,
``pvsst simulate``).

Each option is one field of :class:`~pvsst.sim.llm.config.GatewayConfig`, with its default and bounds
there (the help shows the default; a value out of bounds is one line naming the option's field). The
overrides are applied to the document's ``execution`` section with
:meth:`~pvsst.sim.llm.config.GatewayConfig.with_options` and recorded in the run's manifest as a
deviation. Model servers (``endpoints``) come only from the document.

Examples
--------
>>> gateway_overrides(max_concurrency=2, requests_per_minute=None, request_timeout_s=None, api_base=None,
...                   structured_output=None)
{'max_concurrency': 2}
"""
from __future__ import annotations

import typer

from pvsst.sim.llm.config import DEFAULT_MAX_CONCURRENCY, DEFAULT_TIMEOUT_S
from pvsst.sim.llm.structured_modes import SETTINGS

MAX_CONCURRENCY = typer.Option(None, "--max-concurrency", help=f"Model calls in flight per worker (default: the "
                               f"document's execution.max_concurrency, else {DEFAULT_MAX_CONCURRENCY}).")
REQUESTS_PER_MINUTE = typer.Option(None, "--requests-per-minute", help="Pace the calls of each worker to this "
                                   "many per minute (default: the document's, else unpaced).")
REQUEST_TIMEOUT = typer.Option(None, "--request-timeout", help=f"Per-try timeout of a model call in seconds "
                               f"(default: the document's, else {DEFAULT_TIMEOUT_S:g}).")
API_BASE = typer.Option(None, "--api-base", help="One OpenAI-compatible model server (vLLM, Ollama, llama.cpp) "
                        "for litellm models; endpoints come only from the document.")
STRUCTURED_OUTPUT = typer.Option(None, "--structured-output", help=f"How a reply's JSON is asked for, for every "
                                 f"model: {', '.join(SETTINGS)} (default: the document's).")


def gateway_overrides(**options) -> dict:
    """The gateway fields given on the command line (those not ``None``), by field name."""
    return {name: value for name, value in options.items() if value is not None}
