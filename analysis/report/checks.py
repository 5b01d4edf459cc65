"""The checks of a run: complete blocks, exposure counts, parse failures, model calls, cost and time,
degraded trials and model servers.

Each check is a small table plus one-line findings; a finding that needs a reader's attention starts
with ``WARNING``. Inputs are the run's manifest, the trial outcome table (``RUN/analysis``) and the
provenance rows of every model call (``llm_calls``); trials' own ``metrics.json`` fill in what a run
did not record per call.

Examples
--------
>>> import pandas as pd
>>> outcomes = pd.DataFrame({"condition": ["control", "likes"], "parse_error_rate": [0.0, 0.2],
...                          "vote_parse_error_rate": [0.0, 0.0]})
>>> check = parse_failure_check(outcomes, threshold=0.05)
>>> check.findings[0].startswith("WARNING")
True
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import pandas as pd

from pvsst.analysis.figures.summaries import block_key
from pvsst.analysis.stats.preregistered_checks import PARSE_RATE_COLUMNS, parse_failure_table


@dataclass(frozen=True)
class RunCheck:
    """One check of a run: a title, a table, findings (``WARNING ...`` lines need attention)."""

    title: str
    table: pd.DataFrame
    findings: list[str] = field(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        return [f for f in self.findings if f.startswith("WARNING")]


def block_check(manifest: Mapping, outcomes: pd.DataFrame, excluded: pd.DataFrame | None = None) -> RunCheck:
    """Planned versus complete blocks; a block is complete when every one of its trials finished."""
    planned = manifest.get("blocks") if isinstance(manifest.get("blocks"), Mapping) else None
    done = set(outcomes["trial_id"].astype(str)) if "trial_id" in outcomes.columns else set()
    if planned:
        rows = [{"block": block, "trials_planned": len(trials),
                 "trials_done": sum(str(t) in done for t in trials)} for block, trials in planned.items()]
    else:
        arms = set(outcomes["condition"].astype(str)) if "condition" in outcomes.columns else set()
        keys = block_key(outcomes)
        rows = [{"block": key, "trials_planned": len(arms),
                 "trials_done": int(outcomes.loc[keys == key, "condition"].nunique())}
                for key in dict.fromkeys(keys)]
    table = pd.DataFrame(rows, columns=["block", "trials_planned", "trials_done"])
    table["complete"] = table["trials_done"] == table["trials_planned"]
    n_complete = int(table["complete"].sum())
    findings = [f"{n_complete} of {len(table)} planned blocks complete "
                f"({int(table['trials_done'].sum())} of {int(table['trials_planned'].sum())} trials done)"]
    if n_complete < len(table):
        findings.append(f"WARNING {len(table) - n_complete} incomplete block(s) left out of the contrasts "
                        "that need their missing arms")
    if excluded is not None and len(excluded):
        findings.append(f"{len(excluded)} block x contrast x metric rows excluded by the analysis "
                        "(RUN/analysis/excluded_blocks.csv)")
    return RunCheck("Blocks", table, findings)


def exposure_check(outcomes: pd.DataFrame, exposures: pd.DataFrame | None = None) -> RunCheck:
    """Adversarial impressions delivered versus expected (n_honest x (rounds - 1) per adversarial trial)."""
    needed = ("condition", "attacker_impressions", "expected_attacker_impressions")
    if any(c not in outcomes.columns for c in needed):
        return RunCheck("Exposure", pd.DataFrame(), ["exposure counts not recorded in the trial outcomes"])
    frame = outcomes.assign(_pass=outcomes["attacker_impressions"].astype(float)
                            == outcomes["expected_attacker_impressions"].astype(float))
    table = frame.groupby("condition", sort=False).agg(
        trials=("condition", "size"), attacker_impressions=("attacker_impressions", "sum"),
        expected=("expected_attacker_impressions", "sum"), trials_failing=("_pass", lambda s: int((~s).sum())))
    if exposures is not None and len(exposures) and {"trial_id", "viewer_id"} <= set(exposures.columns):
        per_trial = exposures.groupby("trial_id").size()
        feed = outcomes.assign(_feed=outcomes["trial_id"].map(per_trial).fillna(0)).groupby("condition")["_feed"]
        table["feed_impressions"] = feed.sum().reindex(table.index).astype(int)
    table = table.reset_index()
    failing = int(table["trials_failing"].sum())
    findings = [f"{int(table['attacker_impressions'].sum())} adversarial impressions delivered, "
                f"{int(table['expected'].sum())} expected"]
    findings.append(f"WARNING {failing} trial(s) failed the exposure check" if failing
                    else "every trial passed the exposure check")
    return RunCheck("Exposure", table, findings)


def parse_failure_check(outcomes: pd.DataFrame, threshold: float) -> RunCheck:
    """Post and vote parse-failure rates per arm against the preregistered threshold
    (:func:`pvsst.analysis.stats.preregistered_checks.parse_failure_table`)."""
    table = parse_failure_table(outcomes, threshold)
    if table.empty:
        return RunCheck("Parse failures", table, ["parse-failure rates not recorded"])
    findings = []
    for column in PARSE_RATE_COLUMNS:
        if f"{column}_mean" not in table.columns:
            continue
        rates = pd.to_numeric(outcomes[column], errors="coerce")
        overall = float(rates.mean())
        above = int(table[f"{column}_trials_above"].sum())
        kind = "post" if column == "parse_error_rate" else "vote"
        if overall > threshold:
            findings.append(f"WARNING mean {kind} parse-failure rate {overall:.3%} exceeds the preregistered "
                            f"threshold {threshold:.1%}")
        else:
            findings.append(f"mean {kind} parse-failure rate {overall:.3%} is within the preregistered "
                            f"threshold {threshold:.1%}")
        if above:
            findings.append(f"{above} trial(s) above the threshold on {kind} parsing")
    return RunCheck("Parse failures", table, findings)


def usage_check(llm_calls: pd.DataFrame, trials: pd.DataFrame, manifest: Mapping) -> RunCheck:
    """Model calls, cache hits, tokens, cost and latency per model; run wall time from the manifest."""
    if len(llm_calls) and "model" in llm_calls.columns:
        calls = llm_calls.assign(_cached=llm_calls.get("cached", False).astype(bool),
                                 _failed=llm_calls.get("status", "ok").astype(str) != "ok")
        table = calls.groupby("model", sort=True).agg(
            calls=("model", "size"), cache_hits=("_cached", "sum"), failed=("_failed", "sum"),
            prompt_tokens=("prompt_tokens", "sum"), completion_tokens=("completion_tokens", "sum"),
            cost_usd=("cost_usd", "sum"), model_latency_s=("latency_s", "sum")).reset_index()
        source = "per-call provenance (llm_calls)"
    else:
        present = [c for c in ("n_calls", "cache_hits", "prompt_tokens", "completion_tokens", "cost_usd")
                   if c in trials.columns]
        table = (trials.groupby("model", sort=True)[present].sum().reset_index()
                 if present and "model" in trials.columns else pd.DataFrame())
        source = "trial metrics (no per-call rows)"
    findings = []
    if len(table):
        n_calls = int(table["calls" if "calls" in table else "n_calls"].sum()) if (
            "calls" in table or "n_calls" in table) else 0
        hits = int(table["cache_hits"].sum()) if "cache_hits" in table else 0
        findings.append(f"{n_calls:,} model calls, {hits:,} cache hits"
                        + (f" ({hits / n_calls:.1%})" if n_calls else "") + f"; from {source}")
        if "prompt_tokens" in table:
            findings.append(f"{int(table['prompt_tokens'].sum()):,} prompt + "
                            f"{int(table['completion_tokens'].sum()):,} completion tokens; cost "
                            f"${float(table['cost_usd'].sum()):.4f}")
        if "failed" in table and int(table["failed"].sum()):
            findings.append(f"WARNING {int(table['failed'].sum())} call(s) ended with a non-ok status")
    else:
        findings.append("no model-call records")
    wall = run_wall_seconds(manifest)
    if wall is not None:
        sessions = len(manifest.get("runs") or [])
        findings.append(f"wall time {wall:,.1f} s over {sessions} run session(s)")
    if "elapsed_seconds" in trials.columns:
        seconds = float(pd.to_numeric(trials["elapsed_seconds"], errors="coerce").sum())
        findings.append(f"summed trial time {seconds:,.1f} s")
    return RunCheck("Model calls, cache, tokens, cost and time", table, findings)


def call_health_check(manifest: Mapping, threshold: float) -> RunCheck:
    """Degraded trials (a share of failed calls above the preregistered threshold), calls served per
    model endpoint, failovers and the structured-output mode that served, from the run's manifest.

    Examples
    --------
    >>> manifest = {"trials": {"t1": {"status": "degraded", "calls": 24, "failed_calls": 24, "failed_share": 1.0},
    ...                        "t2": {"status": "done", "calls": 24, "failed_calls": 0, "failed_share": 0.0}},
    ...             "model_calls": {"endpoints": {"http://a/v1": 24}, "failovers": 2,
    ...                             "structured_output": {"m @ http://a/v1": "json_object"}}}
    >>> check = call_health_check(manifest, threshold=0.05)
    >>> check.warnings
    ['WARNING 1 trial(s) degraded: more of their model calls failed than the preregistered 5.0%: t1 (100.0% of 24)']
    >>> check.table.to_dict("records")
    [{'endpoint': 'http://a/v1', 'calls_served': 24}]
    """
    trials = manifest.get("trials") if isinstance(manifest.get("trials"), Mapping) else {}
    summary = manifest.get("model_calls") if isinstance(manifest.get("model_calls"), Mapping) else {}
    degraded = {name: entry for name, entry in trials.items() if entry.get("status") == "degraded"}
    findings = []
    if degraded:
        listed = ", ".join(f"{name} ({float(entry.get('failed_share') or 0):.1%} of {int(entry.get('calls') or 0)})"
                           for name, entry in list(degraded.items())[:10])
        more = f", and {len(degraded) - 10} more" if len(degraded) > 10 else ""
        findings.append(f"WARNING {len(degraded)} trial(s) degraded: more of their model calls failed than the "
                        f"preregistered {threshold:.1%}: {listed}{more}")
    else:
        failed = sum(int(entry.get("failed_calls") or 0) for entry in trials.values())
        findings.append(f"no trial degraded ({failed} failed call(s) in all; threshold {threshold:.1%} per trial)")
    endpoints = summary.get("endpoints") or {}
    table = pd.DataFrame([{"endpoint": k, "calls_served": int(v)} for k, v in endpoints.items()],
                         columns=["endpoint", "calls_served"])
    if endpoints:
        findings.append(f"{sum(endpoints.values()):,} provider calls over {len(endpoints)} endpoint(s); "
                        f"{int(summary.get('failovers') or 0)} failover(s) to another endpoint")
    for pair, mode in (summary.get("structured_output") or {}).items():
        findings.append(f"structured output {mode} for {pair}")
    return RunCheck("Model servers and failed calls", table, findings)


def run_wall_seconds(manifest: Mapping) -> float | None:
    """Summed wall time of the run sessions recorded in the manifest (None when none finished)."""
    total, seen = 0.0, False
    for session in manifest.get("runs") or []:
        try:
            start = datetime.fromisoformat(str(session["started_at"]))
            end = datetime.fromisoformat(str(session["finished_at"]))
        except (KeyError, TypeError, ValueError):
            continue
        total += (end - start).total_seconds()
        seen = True
    return total if seen else None


def as_int_if_whole(frame: pd.DataFrame) -> pd.DataFrame:
    """Float columns holding only whole numbers printed as integers (tables read better)."""
    out = frame.copy()
    for column in out.columns:
        values = out[column]
        if values.dtype.kind == "f" and values.notna().all() and np.all(np.mod(values, 1) == 0):
            out[column] = values.astype(np.int64)
    return out
