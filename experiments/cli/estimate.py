"""`pvsst estimate SPEC [--calls-per-second X]`: calls, tokens, cost and time of a study, before running it."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from pvsst.experiments.cli.lazy import lazy_module

rich_box = lazy_module("rich.box")
rich_console = lazy_module("rich.console")
rich_table = lazy_module("rich.table")
estimate = lazy_module("pvsst.experiments.spec.estimate")
spec_study = lazy_module("pvsst.experiments.spec.study")
thread_study = lazy_module("pvsst.experiments.spec.thread_study")
errors = lazy_module("pvsst.core.errors")


def _duration(seconds: float) -> str:
    """``"3 h 33 min"``, ``"3 min 36 s"``, ``"19 s"``."""
    if seconds >= 3600:
        return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60)} min"
    if seconds >= 60:
        return f"{int(seconds // 60)} min {int(seconds % 60)} s"
    return f"{seconds:.0f} s"


def _usd(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.2f}"


def estimate_command(
    spec: Path = typer.Argument(..., help="The study spec (YAML)."),
    calls_per_second: Optional[float] = typer.Option(
        None, "--calls-per-second", min=1e-9,
        help="Throughput of the whole run; default: per model kind (embedded, scripted, served)."),
) -> None:
    """Print trials, model calls, prompt / completion tokens, cost and wall time; calls no model."""
    if thread_study.is_thread_spec(spec):
        raise errors.InputError(str(spec), "schedule", "pvsst estimate covers feed studies, not threads: a thread's "
                                "calls depend on its seeded draws; run the spec with a scripted model (model: "
                                "scripted/thread_commenter, --deviation) and read the calls from its summary")
    study = spec_study.load_spec(spec)
    result = estimate.estimate(study, calls_per_second=calls_per_second)
    table = rich_table.Table(title=f"{study.id}: {result.trials:,} trials, {result.calls:,} model calls",
                             box=rich_box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    table.add_column("condition", no_wrap=True)
    for header in ("trials", "calls/\ntrial", "calls", "prompt\ntokens", "completion\ntokens", "cost"):
        table.add_column(header, justify="right", no_wrap=True)
    for name, row in result.by_condition.items():
        table.add_row(name, f"{row.trials:,}", f"{row.calls_per_trial:,}", f"{row.calls:,}",
                      f"{row.prompt_tokens:,}", f"{row.completion_tokens:,}", _usd(row.cost_usd))
    total_cost = _usd(result.cost_usd) + (" + unknown" if result.unpriced_models else "")
    table.add_row("total", f"{result.trials:,}", "", f"{result.calls:,}", f"{result.prompt_tokens:,}",
                  f"{result.completion_tokens:,}", total_cost, style="bold")
    console = rich_console.Console(highlight=False, soft_wrap=True)
    console.print(table)
    console.print(f"trials: {result.trials:,}   model calls: {result.calls:,}   "
                  f"wall time: {_duration(result.wall_s)} at {result.throughput_note}", markup=False)
    if len(result.by_model) > 1:
        parts = [f"{model} {row.calls:,} calls, {_usd(row.cost_usd)}" for model, row in result.by_model.items()]
        console.print("by model: " + "; ".join(parts), markup=False)
    if result.unpriced_models:
        console.print(f"cost unknown for {', '.join(result.unpriced_models)} (no price in litellm's table; "
                      "counted as $0)", markup=False)
    budget = study.budget
    if budget.max_usd is not None and result.cost_usd > budget.max_usd:
        console.print(f"warning: estimated cost {_usd(result.cost_usd)} exceeds budget.max_usd "
                      f"{_usd(budget.max_usd)}: the run will stop at the cap", markup=False)
    tokens = result.prompt_tokens + result.completion_tokens
    if budget.max_tokens is not None and tokens > budget.max_tokens:
        console.print(f"warning: estimated {tokens:,} tokens exceed budget.max_tokens {budget.max_tokens:,}: "
                      "the run will stop at the cap", markup=False)
    console.print("Calls: every round each honest agent posts and votes once and each adversary posts once; "
                  "retries (up to max_attempts - 1 per call) are not included. Tokens: prompt from the "
                  "templates with full memory and feed; completion at the max_tokens / vote_max_tokens caps "
                  "(an upper bound).", markup=False, style="dim")


def register(app: typer.Typer) -> None:
    app.command("estimate")(estimate_command)
