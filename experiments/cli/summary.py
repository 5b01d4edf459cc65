"""The one printer of a run's summary, shared by `pvsst run` and `pvsst survey run`."""
from __future__ import annotations

import typer
from rich.console import Console

from pvsst.core.redaction import redact

SHOWN_FAILURES = 10


def print_summary(summary) -> None:
    """Print up to ten failures, up to ten degraded units and the summary line of each job of a ``RunSummary``
    (secrets redacted); exit with its status if nonzero. A run that did not succeed (failed units, a
    budget or replay-only stop) says so on stderr; a successful one on stdout."""
    console = _RedactingConsole(stderr=bool(summary.status))
    for job in summary.jobs():  # the study's trials, then its audit when it has one
        for failure in job.failures[:SHOWN_FAILURES]:
            console.print(f"[red]failed[/red] {failure}", highlight=False, soft_wrap=True)
        degraded = getattr(job, "degraded", [])
        for line in degraded[:SHOWN_FAILURES]:
            console.print(f"[red]degraded[/red] {line}", highlight=False, soft_wrap=True)
        if len(degraded) > SHOWN_FAILURES:
            console.print(f"[red]degraded[/red] ... and {len(degraded) - SHOWN_FAILURES} more (see the manifest)")
        console.print(job.line(), highlight=False, soft_wrap=True)
    if summary.status:
        raise typer.Exit(summary.status)


class _RedactingConsole(Console):
    """A console whose printed text passes through :func:`pvsst.core.redaction.redact` (an error may echo a key)."""

    def print(self, text: str, *args, **kwargs) -> None:
        super().print(redact(text), *args, **kwargs)
