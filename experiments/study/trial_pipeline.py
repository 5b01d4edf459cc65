"""One trial of a study, end to end: spec + plan -> engine -> outcome metrics (-> the kernel writes it).

This is the only place that joins ``sim`` (the engine) and ``analysis`` (the outcome definitions), so
``metrics.json`` uses exactly the definitions the statistics use. A worker runs :func:`execute_trial`
and returns the trial's tables and ``metrics.json`` as plain data
(:class:`~pvsst.experiments.run.kernel.UnitResult`); only the run kernel writes the run store, so a
worker on a machine without the run's disk loses nothing.
"""
from __future__ import annotations

import dataclasses
import json
import time

import pandas as pd

from pvsst.analysis.study.outcomes import trial_outcomes
from pvsst.analysis.text.feed_markup import count_markup_posts
from pvsst.core.run_layout import METRICS
from pvsst.experiments.run.kernel import UnitResult
from pvsst.experiments.spec.design import ScheduledTrial
from pvsst.experiments.spec.materials import spec_protocol
from pvsst.experiments.spec.study import StudySpec
from pvsst.experiments.study.files import StagedFiles, StudyFiles
from pvsst.experiments.study.injection import profiled, trial_steerings
from pvsst.sim.llm.stops import RunStop
from pvsst.sim.materials import load_materials
from pvsst.sim.protocol import differs_from_preset
from pvsst.sim.trial.run import TrialResult, run_trial
from pvsst.sim.trial.settings import TrialSetup


def trial_config(spec: StudySpec, plan: ScheduledTrial, staged: StagedFiles = StagedFiles()) -> TrialSetup:
    """The engine configuration of one planned trial: the spec's trial section as it is (it is the engine's
    :class:`~pvsst.sim.trial.settings.TrialSettings`); the spec's own materials directory and edge list are the
    worker's ``staged`` copies of them (:mod:`pvsst.experiments.study.files`)."""
    params = spec.trial.parameters()
    protocol = spec_protocol(spec)
    if staged.edge_list is not None:
        params["network"] = spec.trial.network.model_copy(update={"path": str(staged.edge_list)})
    if staged.materials_dir is not None:
        protocol = dataclasses.replace(protocol, materials=str(staged.materials_dir))
    return TrialSetup(**params, trial_id=plan.trial_id, block_id=plan.block_id, model_name=plan.model_name,
                       topic=spec.topic(plan.topic_id).to_topic(), condition=plan.condition, seed=plan.seed,
                       push_direction=plan.push_direction, protocol=protocol)


def trial_metrics(result: TrialResult) -> dict:
    """metrics.json of a trial: its factors, PV-SST's outcome columns and its call accounting."""
    cfg = result.config
    protocol = cfg.protocol
    outcomes = trial_outcomes(result.agents, result.posts, result.votes, result.exposures,
                              push_direction=cfg.push_direction, adversarial=cfg.arm.adversarial,
                              n_rounds=cfg.n_rounds, similarity_edge_cases=protocol.similarity_edge_cases)
    factors = {"trial_id": cfg.trial_id, "block_id": cfg.block_id, "model": cfg.model_name, "topic_id": cfg.topic.id,
               "seed": cfg.seed, "condition": cfg.condition, "push_direction": cfg.push_direction,
               "protocol": protocol.preset,
               "protocol_overrides": ",".join(f"{k}={v}" for k, v in differs_from_preset(protocol).items()),
               "similarity_edge_cases": protocol.similarity_edge_cases}
    accounting = {**call_totals(result.llm_calls), "elapsed_seconds": round(result.elapsed_s, 3)}
    return {**factors, **outcomes, **accounting, **markup_check(result)}


def call_totals(calls: pd.DataFrame) -> dict:
    """Calls, cache hits, tokens and cost of a unit's provenance rows (``llm_calls``).

    Examples
    --------
    >>> calls = pd.DataFrame({"cached": [True, False], "prompt_tokens": [10, 12], "completion_tokens": [3, 4],
    ...                       "cost_usd": [0.0, 0.5]})
    >>> call_totals(calls)
    {'n_calls': 2, 'cache_hits': 1, 'prompt_tokens': 22, 'completion_tokens': 7, 'cost_usd': 0.5}
    """
    return {
        "n_calls": int(len(calls)),
        "cache_hits": int(calls["cached"].sum()) if len(calls) else 0,
        "prompt_tokens": int(calls["prompt_tokens"].sum()) if len(calls) else 0,
        "completion_tokens": int(calls["completion_tokens"].sum()) if len(calls) else 0,
        "cost_usd": float(calls["cost_usd"].sum()) if len(calls) else 0.0,
    }


def markup_check(result: TrialResult) -> dict:
    """How agent text entered other prompts (``render``) and how many raw posts held line breaks or
    feed-like markup (``markup_posts``, :mod:`pvsst.analysis.text.feed_markup`), with the templates' field labels."""
    protocol = result.config.protocol
    labels = load_materials(protocol.materials).field_labels()
    return {"render": protocol.render, "markup_posts": count_markup_posts(result.posts["text"], labels)}


def trial_files(result: TrialResult, metrics: dict) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
    """A trial folder's contents: its tables and its ``metrics.json`` text (sorted keys, so the same
    trial always gives the same bytes)."""
    return result.tables(), {METRICS: json.dumps(metrics, indent=2, sort_keys=True, default=str) + "\n"}


def execute_trial(spec: StudySpec, plan: ScheduledTrial, gateway, personas: pd.DataFrame | None,
                  files: StudyFiles = StudyFiles()) -> UnitResult:
    """Run one trial; a done result carries its tables and ``metrics.json``, and the manifest's call
    accounting (:func:`call_accounting`). Failures come back as a status, not raised (except a run-level
    stop, :class:`~pvsst.sim.llm.stops.RunStop`: budget spent, replay-only miss, which must end the whole
    run). Nothing is written here. A study with identity injection steers its honest agents' calls
    (:mod:`pvsst.experiments.study.injection`)."""
    started = time.perf_counter()
    try:
        staged = files.stage()
        steerings = trial_steerings(spec, personas, staged.vectors, seed=plan.seed)
        result = run_trial(trial_config(spec, plan, staged), gateway, profiled(spec, personas), steerings=steerings)
        metrics = trial_metrics(result)
    except RunStop:
        raise
    except Exception as err:  # noqa: BLE001 - a failed trial is recorded, the others go on
        return UnitResult(plan.trial_id, "failed", f"{type(err).__name__}: {err}",
                          elapsed_s=time.perf_counter() - started)
    tables, texts = trial_files(result, metrics)
    accounting = call_accounting(result.llm_calls)
    return UnitResult(plan.trial_id, "done", calls=metrics["n_calls"], cache_hits=metrics["cache_hits"],
                      failed_calls=accounting.pop("failed_calls", 0), cost_usd=metrics["cost_usd"],
                      tokens=metrics["prompt_tokens"] + metrics["completion_tokens"],
                      elapsed_s=time.perf_counter() - started, tables=tables, files=texts, record=accounting)


REPLIED = ("ok", "parse_error", "empty", "refusal")  # call statuses of a reply (the others: transport)


def call_accounting(calls: pd.DataFrame) -> dict:
    """Failed calls, calls per endpoint, failovers and the structured-output modes that served, from a
    trial's provenance rows (``llm_calls``).

    Examples
    --------
    >>> calls = pd.DataFrame({"status": ["ok", "parse_error", "server_error"], "cached": [False, False, False],
    ...                       "endpoint": ["http://a", "http://b", ""], "failovers": [0, 1, 0],
    ...                       "model": ["openai/m"] * 3, "structured_output": ["json_object", "json_object", ""]})
    >>> acc = call_accounting(calls)
    >>> acc["failed_calls"], acc["endpoints"], acc["failovers"]
    (2, {'http://a': 1, 'http://b': 1}, 1)
    >>> acc["structured_output"]
    {'openai/m @ http://a': 'json_object', 'openai/m @ http://b': 'json_object'}
    """
    if not len(calls):
        return {"failed_calls": 0, "endpoints": {}, "failovers": 0, "structured_output": {}}
    # Only these columns: a row mask over the whole table would copy every prompt's text as well.
    calls = calls[["status", "cached", "endpoint", "failovers", "model", "structured_output"]]
    answered = calls[~calls["cached"].astype(bool) & calls["status"].isin(REPLIED)]  # a server replied
    endpoints = answered[answered["endpoint"].astype(str) != ""]
    modes = answered[answered["structured_output"].astype(str) != ""]
    pairs = (modes["model"].astype(str) + " @ " + modes["endpoint"].astype(str).replace("", "(default)"))
    return {
        "failed_calls": int((calls["status"] != "ok").sum()),
        "endpoints": {str(k): int(v) for k, v in endpoints.groupby("endpoint").size().items()},
        "failovers": int(pd.to_numeric(calls["failovers"], errors="coerce").fillna(0).sum()),
        "structured_output": dict(sorted({(p, str(m)) for p, m in zip(pairs, modes["structured_output"])})),
    }
