"""The one printer of a run's summary, shared by the run commands (`pvsst run`, `pvsst survey run`, ...)."""
from __future__ import annotations

import typer

from pvsst.core.redaction import redact
from pvsst.experiments.cli.lazy import lazy_module

rich_console = lazy_module("rich.console")

SHOWN_FAILURES = 10


def print_summary(summary) -> None:
    """Print up to ten failures, up to ten degraded units and the summary line of each job of a ``RunSummary``
    (secrets redacted); exit with its status if nonzero. A run that did not succeed (failed units, a
    budget or replay-only stop) says so on stderr; a successful one on stdout."""
    console = rich_console.Console(stderr=bool(summary.status))
    for job in summary.jobs():  # the study's trials, then its audit when it has one
        for failure in job.failures[:SHOWN_FAILURES]:
            _print(console, f"[red]failed[/red] {failure}")
        degraded = getattr(job, "degraded", [])
        for line in degraded[:SHOWN_FAILURES]:
            _print(console, f"[red]degraded[/red] {line}")
        if len(degraded) > SHOWN_FAILURES:
            _print(console, f"[red]degraded[/red] ... and {len(degraded) - SHOWN_FAILURES} more (see the manifest)")
        _print(console, job.line())
    if summary.status:
        raise typer.Exit(summary.status)


def _print(console, text: str) -> None:
    """One line through :func:`pvsst.core.redaction.redact` (an error may echo a key)."""
    console.print(redact(text), highlight=False, soft_wrap=True)
