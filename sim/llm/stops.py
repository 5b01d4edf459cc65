"""Run-level stops: conditions under which no further model call of the run may be made.

A stop is not a failure of one call or one trial: a trial that meets one must not be recorded as
failed while the run goes on. Every layer between the gateway and the runner lets a :class:`RunStop`
through; the runner ends the run, keeps the trials that finished, and exits with :attr:`exit_code`.

Examples
--------
>>> from pvsst.sim.llm.budget import BudgetExceeded
>>> from pvsst.sim.llm.cache import ReplayMiss
>>> BudgetExceeded("spent").exit_code, ReplayMiss("no reply").exit_code, ReplayMiss("x").status
(3, 4, 'replay_miss')
"""
from __future__ import annotations


class RunStop(RuntimeError):
    """Base of the run-level stops; ``str(err)`` is one line, ``status`` the trial status it leaves."""

    exit_code = 1
    status = "stopped"
