"""`pvsst llm complete`: one model call through the gateway (cache, retries, schema, provenance)."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Optional

import typer

from pvsst.core.errors import InputError
from pvsst.core.input_files import read_json
from pvsst.experiments.cli.gateway_options import gateway_options
from pvsst.experiments.cli.groups import command_group
from pvsst.experiments.cli.lazy import lazy_module

budget_module = lazy_module("pvsst.sim.llm.budget")
cache_module = lazy_module("pvsst.sim.llm.cache")
config_module = lazy_module("pvsst.sim.llm.config")
gateway_module = lazy_module("pvsst.sim.llm.gateway")
registry = lazy_module("pvsst.sim.llm.providers.registry")
stops = lazy_module("pvsst.sim.llm.stops")
structured = lazy_module("pvsst.sim.llm.structured")
llm_types = lazy_module("pvsst.sim.llm.types")

EXIT_CALL_FAILED = 1
DEFAULT_CACHE = "~/.cache/pvsst/llm_cache.sqlite"

llm_app = command_group("Talk to a model through the pvsst gateway.")


def default_cache_path() -> Path:
    """``$PVSST_CACHE`` if set, else ``~/.cache/pvsst/llm_cache.sqlite``."""
    return Path(os.environ.get("PVSST_CACHE") or DEFAULT_CACHE).expanduser()


def read_schema(path: Path) -> dict[str, Any]:
    """A JSON schema from ``path``; ``InputError`` if unreadable, not JSON or not a valid schema."""
    schema = read_json(path, "schema", expect=None)
    structured.check_schema(schema, source=str(path))
    return schema


def _check_sampling(temperature: float, max_tokens: int) -> None:
    if not 0.0 <= temperature <= 2.0:
        raise InputError("llm complete", "--temperature", f"must be between 0 and 2, got {temperature}")
    if max_tokens < 1:
        raise InputError("llm complete", "--max-tokens", f"must be >= 1, got {max_tokens}")


@llm_app.command("complete")
@gateway_options("request_timeout_s", "api_base", "structured_output")
def complete(
    model_name: str = typer.Option(..., "--model",
                                   help="e.g. embedded/smollm2-135m, scripted/echo, openai/gpt-4o-mini"),
    prompt: str = typer.Option(..., "--prompt", help="The user message."),
    system: Optional[str] = typer.Option(None, "--system", help="A system message."),
    schema_file: Optional[Path] = typer.Option(None, "--schema", help="JSON schema file the reply must satisfy."),
    seed: int = typer.Option(0, "--seed", help="Request seed (schema retries use seed+1, seed+2, ...)."),
    temperature: float = typer.Option(0.8, "--temperature", help="Sampling temperature, 0..2."),
    max_tokens: int = typer.Option(120, "--max-tokens", help="Most tokens in the reply, >= 1."),
    cache_file: Optional[Path] = typer.Option(
        None, "--cache", help=f"Response cache (SQLite). Default: $PVSST_CACHE or {DEFAULT_CACHE}."),
    replay_only: bool = typer.Option(False, "--replay-only", help="Answer only from the cache; a miss exits 4."),
    as_json: bool = typer.Option(False, "--json", help='Print one JSON object {"text", "parsed", "provenance"}.'),
    budget_usd: Optional[float] = typer.Option(None, "--budget-usd", help="Refuse to call once this USD is spent."),
    budget_tokens: Optional[int] = typer.Option(None, "--budget-tokens",
                                                help="Refuse to call once this many tokens are spent."),
    gateway: dict | None = None,
) -> None:
    """Make one model call through the gateway and print the reply.

    Exit codes: 0 the call succeeded; 1 the call ended in a recorded failure (parse_error, truncated
    (cut at --max-tokens), empty, refusal, timeout, rate_limited, server_error, error: the reply is still printed); 2
    bad input
    (unknown provider, unreadable or invalid schema file, temperature outside 0..2, max tokens < 1);
    3 the budget cap is reached (no call is made); 4 --replay-only and the request is not cached.
    """
    registry.ensure_runnable(model_name)
    _check_sampling(temperature, max_tokens)
    schema = read_schema(schema_file) if schema_file is not None else None
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
    request = llm_types.LLMRequest(model_name=model_name, messages=tuple(messages), schema=schema,
                                   temperature=temperature,
                         max_tokens=max_tokens, seed=seed)
    capped = (budget_usd, budget_tokens) != (None, None)
    budget = budget_module.Budget(max_usd=budget_usd, max_tokens=budget_tokens) if capped else None
    cache = cache_module.ResponseCache(cache_file if cache_file is not None else default_cache_path())
    config = config_module.GatewayConfig().with_options("llm complete", **gateway)
    with gateway_module.Gateway(config, cache, replay_only=replay_only, budget=budget) as model_gateway:
        try:
            result = model_gateway.run([request])[0]
        except stops.RunStop as err:  # budget spent (exit 3) or replay-only miss (exit 4)
            print(f"pvsst: error: {err}", file=sys.stderr)
            raise typer.Exit(err.exit_code) from None
    record = result.record
    if as_json:
        typer.echo(json.dumps({"text": result.text, "parsed": result.parsed, "provenance": record.to_dict()},
                              ensure_ascii=False))
    else:
        typer.echo(result.text or "")
        print(f"[{record.status}] cached={record.cached} attempts={record.attempts} seed={record.request_seed} "
              f"tokens={record.prompt_tokens}+{record.completion_tokens} latency={record.latency_s:.3f}s",
              file=sys.stderr)
    if record.status == llm_types.STATUS_TRUNCATED:
        print(f"pvsst: error: the call ended with status truncated: the reply was cut at the token limit of "
              f"{max_tokens} tokens; raise it with --max-tokens (e.g. --max-tokens {2 * max_tokens})", file=sys.stderr)
        raise typer.Exit(EXIT_CALL_FAILED)
    if not result.ok:
        print(f"pvsst: error: the call ended with status {record.status}: {record.error}", file=sys.stderr)
        raise typer.Exit(EXIT_CALL_FAILED)


def register(app: typer.Typer) -> None:
    app.add_typer(llm_app, name="llm")
