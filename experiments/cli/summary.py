"""The one printer of a run's summary, shared by `pvsst run` and `pvsst survey run`."""
from __future__ import annotations

import typer
from rich.console import Console

SHOWN_FAILURES = 10


def print_summary(summary) -> None:
    """Print up to ten failures, up to ten degraded trials and the summary line of a ``RunSummary``; exit with its status if nonzero."""
    console = Console()
    for failure in summary.failures[:SHOWN_FAILURES]:
        console.print(f"[red]failed[/red] {failure}", highlight=False, soft_wrap=True)
    degraded = getattr(summary, "degraded", [])
    for line in degraded[:SHOWN_FAILURES]:
        console.print(f"[red]degraded[/red] {line}", highlight=False, soft_wrap=True)
    if len(degraded) > SHOWN_FAILURES:
        console.print(f"[red]degraded[/red] ... and {len(degraded) - SHOWN_FAILURES} more (see the manifest)")
    console.print(summary.line(), highlight=False, soft_wrap=True)
    if summary.status:
        raise typer.Exit(summary.status)
