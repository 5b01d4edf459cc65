"""`pvsst run`: run (or resume) a frozen study spec into a run directory."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console


def run(
    spec: Path = typer.Argument(..., help="Study spec (YAML), frozen with `pvsst prereg freeze`."),
    out: Path = typer.Option(..., "--out", help="Run directory (created; an existing one is resumed)."),
    executor: Optional[str] = typer.Option(None, "--executor", help="local (process pool) or ray; default: the spec's."),
    workers: Optional[int] = typer.Option(None, "--workers", help="Trials in parallel; default: the spec's."),
    replay_only: bool = typer.Option(False, "--replay-only", help="Serve every call from the run's cache; a miss stops the run (exit 4)."),
    deviation: Optional[str] = typer.Option(None, "--deviation", help="Run a changed or unfrozen spec; the text is recorded in the manifest."),
    budget: Optional[float] = typer.Option(None, "--budget", help="Spending cap in USD; reaching it stops the run cleanly (exit 3)."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Address of a running Ray cluster."),
) -> None:
    """Run every trial of a frozen spec; skips trials already DONE (resume).

    Exit codes: 0 all trials done; 1 some trials failed, or are degraded (more of their model calls
    failed than the spec's analysis.parse_failure_threshold; both recorded in the manifest); 2 bad input
    (unfrozen or changed spec, invalid spec); 3 budget reached; 4 replay-only cache miss.
    """
    from experiments.run.runner import run_study

    summary = run_study(spec, out, executor=executor, workers=workers, replay_only=replay_only,
                        deviation=deviation, budget_usd=budget, ray_address=ray_address)
    console = Console(stderr=False)
    for failure in summary.failures[:10]:
        console.print(f"[red]failed[/red] {failure}", highlight=False, soft_wrap=True)
    for line in summary.degraded[:10]:
        console.print(f"[red]degraded[/red] {line}", highlight=False, soft_wrap=True)
    if len(summary.degraded) > 10:
        console.print(f"[red]degraded[/red] ... and {len(summary.degraded) - 10} more (see the manifest)")
    console.print(summary.line(), highlight=False, soft_wrap=True)
    code = summary.exit_code or (1 if summary.failed or summary.degraded else 0)
    if code:
        raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("run")(run)
