"""A failed run never looks like a success: trials whose model calls mostly failed are ``degraded``.

A trial finishes (its tables are written) even when its calls fail: a failed post leaves the agent's
stance unchanged. When the share of its calls that failed (transport errors, client errors, replies
that never parsed) exceeds the preregistered ``analysis.parse_failure_threshold``, the trial is
marked ``degraded`` in the manifest (:func:`pvsst.experiments.run.summary.unit_status`), ``pvsst run``
exits 1 naming it, and the report's audit shows it.
This module also adds up where the calls went: per endpoint, failovers, structured-output modes.

Examples
--------
>>> degraded_line("t1", {"failed_share": 1.0, "calls": 48}, 0.05)
't1: 100.0% of 48 calls failed (threshold 5.0%)'
"""
from __future__ import annotations

from collections.abc import Mapping


def degraded_line(trial_id: str, entry: Mapping, threshold: float) -> str:
    return (f"{trial_id}: {float(entry.get('failed_share') or 0.0):.1%} of {int(entry.get('calls') or 0)} "
            f"calls failed (threshold {threshold:.1%})")


def model_calls_summary(trials: Mapping[str, Mapping]) -> dict:
    """Calls served per endpoint, failovers and the structured-output mode per model and endpoint,
    added up over the manifest's trials (every session of the run).

    Examples
    --------
    >>> model_calls_summary({"a": {"endpoints": {"http://x": 3}, "failovers": 1,
    ...                            "structured_output": {"m @ http://x": "json_object"}},
    ...                      "b": {"endpoints": {"http://x": 2, "http://y": 4}, "failovers": 0}})
    {'endpoints': {'http://x': 5, 'http://y': 4}, 'failovers': 1, 'structured_output': {'m @ http://x': 'json_object'}}
    """
    endpoints: dict[str, int] = {}
    modes: dict[str, str] = {}
    failovers = 0
    for entry in trials.values():
        for endpoint, count in (entry.get("endpoints") or {}).items():
            endpoints[endpoint] = endpoints.get(endpoint, 0) + int(count)
        failovers += int(entry.get("failovers") or 0)
        modes.update(entry.get("structured_output") or {})
    return {"endpoints": dict(sorted(endpoints.items())), "failovers": failovers,
            "structured_output": dict(sorted(modes.items()))}
