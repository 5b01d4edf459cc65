"""What a run did, and its exit code: the one summary of ``pvsst run``, ``pvsst survey run`` and ``pvsst simulate``.

The run kernel (:mod:`pvsst.experiments.run.kernel`) tallies every finished unit here. The exit-code
rule is one: a run-level stop's code (3 budget spent, 4 replay-only miss), else 1 if a unit failed or
is degraded, else 0.

Examples
--------
>>> summary = RunSummary(total=3)
>>> summary.count("t1", "done", "", calls=10, cache_hits=2)
>>> summary.count("t2", "failed", "ValueError: boom", calls=0, cache_hits=0)
>>> summary.skipped += 1
>>> summary.line(), summary.status
('3 trials: 1 done, 1 failed, 1 skipped; 10 calls, 2 cache hits, $0.0000', 1)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from pvsst.sim.llm.budget import BudgetExceeded
from pvsst.sim.llm.cache import ReplayMiss

DEGRADED = "degraded"
STOP_EXIT_CODES = {stop.status: stop.exit_code for stop in (BudgetExceeded, ReplayMiss)}
"""Unit status left by a run-level stop -> the exit code of the run (3 budget spent, 4 replay-only miss)."""
EXIT_FAILED = 1  # failed or degraded units: the run did not produce what it was meant to


def unit_status(status: str, calls: int, failed_calls: int, threshold: float) -> str:
    """``degraded`` for a finished unit whose share of failed calls exceeds ``threshold``, else ``status``.

    Examples
    --------
    >>> unit_status("done", 48, 48, 0.05), unit_status("done", 48, 1, 0.05), unit_status("failed", 0, 0, 0.05)
    ('degraded', 'done', 'failed')
    """
    if status == "done" and calls and failed_calls / calls > threshold:
        return DEGRADED
    return status


@dataclass
class RunSummary:
    """What a run did, as the kernel tallies it unit by unit (trials of a study; a survey counts units)."""

    unit: ClassVar[str] = "trials"
    total: int
    done: int = 0
    failed: int = 0
    skipped: int = 0
    calls: int = 0
    cache_hits: int = 0
    cost_usd: float = 0.0
    tokens: int = 0
    stopped: str = ""
    exit_code: int = 0
    failures: list[str] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)  # "unit: share of calls failed" lines
    then: RunSummary | None = None  # the summary of a second job of the same run (a study's audit)

    def count(self, name: str, status: str, error: str, calls: int, cache_hits: int, cost_usd: float = 0.0,
              tokens: int = 0, **extra: int) -> None:
        """Add one finished unit to the tallies (``extra``: counts a subclass keeps, such as parse failures)."""
        if status == "done":
            self.done += 1
        elif status == DEGRADED:
            self.degraded.append(f"{name}: {error}")
        elif status == "failed":
            self.failed += 1
            self.failures.append(f"{name}: {error}")
        self.calls += calls
        self.cache_hits += cache_hits
        self.cost_usd += cost_usd
        self.tokens += tokens

    def stop(self, status: str, error: str) -> bool:
        """Record a run-level stop if ``status`` is one (budget spent, replay miss); say whether it was."""
        if status in STOP_EXIT_CODES:
            self.stopped, self.exit_code = error, STOP_EXIT_CODES[status]
        return bool(self.stopped)

    def spend(self) -> str:
        """The last part of :meth:`line` (a survey run reports its parse failures there instead)."""
        return f"${self.cost_usd:.4f}"

    def line(self) -> str:
        """One line: tallies, calls, spend and why the run stopped (the one summary every run command prints)."""
        degraded = f"{len(self.degraded)} degraded, " if self.degraded else ""
        text = (f"{self.total} {self.unit}: {self.done} done, {degraded}{self.failed} failed, {self.skipped} skipped; "
                f"{self.calls} calls, {self.cache_hits} cache hits, {self.spend()}")
        return f"{text}; stopped: {self.stopped}" if self.stopped else text

    @property
    def status(self) -> int:
        """The command's exit code: the stop's (3 budget, 4 replay miss), else 1 if a unit failed or is
        degraded, else the second job's (:attr:`then`) status, else 0."""
        own = self.exit_code or (EXIT_FAILED if self.failed or self.degraded else 0)
        return own or (self.then.status if self.then is not None else 0)

    def jobs(self) -> list[RunSummary]:
        """This summary and the ones that follow it (:attr:`then`), in run order."""
        return [self, *(self.then.jobs() if self.then is not None else [])]
