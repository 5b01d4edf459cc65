"""A study's counterfactual first-round audit as the run kernel's second job of ``pvsst run``.

When a spec has an ``audit`` section (:mod:`pvsst.experiments.spec.audit_section`), ``pvsst run`` runs
it after the trials, into ``RUN/audits/<unit_id>/`` (one unit per model x topic, ``audit-<model>-<topic>``):

- the members are built before anything runs (:func:`audit_members`), so a bad setting exits 2 with
  nothing written: ``audit.matched_sets`` base personas drawn with the persona seed from the spec's
  persona source, copied once per level combination of ``audit.vary`` and, with ``audit.arity_null``,
  once per group with only the request seed changed
  (:func:`pvsst.experiments.audit.population.audit_population`); cards rendered in the spec's style;
- each unit plays the first round of the trial of its model and topic under the first of the study's
  seeds and conditions (the first round reads no feed, so the arm does not enter it) for every member
  (:func:`pvsst.sim.first_round_audit.run_first_round_audit`), with the trials' gateway, cache and
  budget;
- the kernel writes each unit's tables and records it under ``audits`` in the manifest (its call
  totals as ``audit_model_calls``, its end as ``audit_finished_at``); a rerun resumes it.

``pvsst analyze`` turns the units into the audit tables (:mod:`pvsst.analysis.study.audit`).

Examples
--------
>>> from pvsst.experiments.spec.study import load_spec
>>> spec = load_spec("experiments/specs/quickstart.yaml")
>>> [unit.unit_id for unit in audit_units(spec)]
['audit-embedded-smollm2-135m-ai_labels']
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pvsst.core.errors import InputError
from pvsst.core.run_layout import AUDITS, CACHE, MANIFEST
from pvsst.experiments.audit.population import audit_population
from pvsst.experiments.run.kernel import RunJob, UnitResult, lost_units
from pvsst.experiments.run.manifest import RunManifest
from pvsst.experiments.run.run_guard import gateway_words
from pvsst.experiments.run.summary import RunSummary
from pvsst.experiments.run.worker_gateway import GatewaySettings, cap_budget, worker_gateway
from pvsst.experiments.spec.design import ScheduledTrial
from pvsst.experiments.spec.study import StudySpec, model_slug, spec_from_canonical
from pvsst.experiments.study.files import StudyFiles, collect_study_files
from pvsst.experiments.study.input import StudyInput
from pvsst.experiments.study.personas import persona_frame, with_cards
from pvsst.experiments.study.trial_pipeline import call_accounting, call_totals, trial_config
from pvsst.sim.first_round_audit import run_first_round_audit
from pvsst.sim.llm.stops import RunStop


class AuditSummary(RunSummary):
    """The audit job's summary: it counts audit units."""

    unit = "audit units"


@dataclass(frozen=True)
class AuditUnit:
    """One audit unit: the first round of one model x topic, under the study's first seed and condition."""

    unit_id: str
    model: str
    topic_id: str
    seed: int
    condition: str


def audit_units(spec: StudySpec) -> list[AuditUnit]:
    """The audit's units in the spec's order of models, then topics."""
    seed, condition = spec.factors.seeds[0], spec.factors.conditions[0]
    return [AuditUnit(f"audit-{model_slug(model)}-{topic.id}", model, topic.id, seed, condition)
            for model in spec.factors.models for topic in spec.factors.topics]


def unit_plan(spec: StudySpec, unit: AuditUnit) -> ScheduledTrial:
    """The trial an audit unit plays the first round of (its model, topic, seed, condition and that seed's
    push direction).

    >>> from pvsst.experiments.spec.study import load_spec
    >>> spec = load_spec("experiments/specs/quickstart.yaml")
    >>> plan = unit_plan(spec, audit_units(spec)[0])
    >>> plan.seed, plan.condition, plan.push_direction
    (101, 'control', 'support')
    """
    return ScheduledTrial(trial_id=unit.unit_id, block_id="", model_name=unit.model, topic_id=unit.topic_id,
                          seed=unit.seed, condition=unit.condition, push_direction=spec.push_directions()[unit.seed],
                          stage=0, order=0)


def audit_members(spec: StudySpec, spec_dir: Path) -> pd.DataFrame:
    """The audit's members with their cards (see the module docstring); bad settings raise
    :class:`~pvsst.core.errors.InputError` naming ``audit``."""
    base = persona_frame(spec, spec_dir)
    members = audit_population(spec.audit, base, seed=spec.personas.seed or 0, source="audit")
    return with_cards(spec, members.drop(columns=[c for c in ("card", "label") if c in members]))


@dataclass(frozen=True)
class AuditTask:
    """Everything a worker needs to run one audit unit (plain data, picklable)."""

    spec: dict
    unit: AuditUnit
    members: pd.DataFrame
    gateway: GatewaySettings
    files: StudyFiles = StudyFiles()
    budget_usd: float | None = None
    budget_tokens: int | None = None
    spent_usd: float = 0.0
    spent_tokens: int = 0


class AuditUnitWorker:
    """The audit job's worker (:class:`~pvsst.experiments.run.kernel.UnitWorker`): plays one unit's first
    round with :func:`~pvsst.sim.first_round_audit.run_first_round_audit`."""

    def run(self, task: AuditTask) -> list[UnitResult]:
        """Play one unit's first round (nothing written); a run-level stop comes back as the unit's status."""
        started = time.perf_counter()
        spec, unit = spec_from_canonical(task.spec), task.unit
        gateway = worker_gateway(task.gateway)
        cap_budget(gateway, task.budget_usd, task.budget_tokens, task.spent_usd, task.spent_tokens)
        try:
            result = run_first_round_audit(trial_config(spec, unit_plan(spec, unit), task.files.stage()),
                                           task.members, gateway)
        except RunStop as err:
            return [UnitResult(unit.unit_id, err.status, str(err))]
        except Exception as err:  # noqa: BLE001 - a failed unit is recorded, the others go on
            return [UnitResult(unit.unit_id, "failed", f"{type(err).__name__}: {err}",
                               elapsed_s=time.perf_counter() - started)]
        totals, accounting = call_totals(result.llm_calls), call_accounting(result.llm_calls)
        return [UnitResult(unit.unit_id, "done", calls=totals["n_calls"], cache_hits=totals["cache_hits"],
                           failed_calls=accounting.pop("failed_calls"), cost_usd=totals["cost_usd"],
                           tokens=totals["prompt_tokens"] + totals["completion_tokens"],
                           elapsed_s=time.perf_counter() - started, tables=result.tables(), record=accounting)]

    def lost(self, task: AuditTask, error: BaseException) -> list[UnitResult]:
        """The unit of a lost worker failed (a rerun plays it again)."""
        return lost_units([task.unit.unit_id], error)


def audit_job(study: StudyInput, run_dir: Path, members: pd.DataFrame, *, spent: RunSummary, executor: str | None,
              workers: int | None, replay_only: bool, budget_usd: float | None, ray_address: str | None,
              progress: bool, retry_degraded: bool = False) -> RunJob:
    """The kernel's job for the audit units (after the trials: the run directory and its manifest exist);
    the budget caps count what the trials of this session (``spent``) spent."""
    spec, execution = study.spec, study.execution
    kind, n_workers = executor or execution.executor, workers or execution.workers
    cap_usd = budget_usd if budget_usd is not None else spec.budget.max_usd
    gateway = GatewaySettings(cache_path=str((run_dir / CACHE).resolve()), replay_only=replay_only,
                              config=execution.gateway_config(), max_attempts=spec.trial.max_attempts)
    manifest = RunManifest.load(run_dir)
    if manifest is None:
        raise InputError(run_dir, MANIFEST, "the audit runs after the study's trials: no manifest here")
    units = audit_units(spec)
    manifest.declare(AUDITS, {u.unit_id: {"model": u.model, "topic_id": u.topic_id, "seed": u.seed,
                                          "condition": u.condition, "members": len(members)} for u in units})
    by_id = {u.unit_id: u for u in units}

    def prepare(job: RunJob):
        files, origins = collect_study_files(spec, study.path.parent.resolve())
        job.name_originals = lambda error: files.name_the_originals(error, origins)
        template = AuditTask(spec=study.canonical, unit=units[0], members=members, gateway=job.gateway, files=files,
                             budget_usd=cap_usd, budget_tokens=spec.budget.max_tokens)
        return lambda pending, summary, each, gateway_settings: (
            dataclasses.replace(template, unit=by_id[unit_id], gateway=gateway_settings,
                                spent_usd=spent.cost_usd + summary.cost_usd, spent_tokens=spent.tokens + summary.tokens)
            for unit_id in pending)

    return RunJob(run_dir=run_dir, manifest=manifest, section=AUDITS, what=f"audit of study {spec.id}",
                  label=f"{spec.id} audit", unit_ids=[u.unit_id for u in units], worker=AuditUnitWorker(),
                  prepare=prepare,
                  gateway=gateway, summary=AuditSummary(total=len(units)),
                  command=["run", study.path, *gateway_words(study.overrides)], deviation=study.deviation,
                  threshold=spec.analysis.parse_failure_threshold, executor=kind, workers=n_workers,
                  ray_address=ray_address or execution.ray_address, progress=progress,
                  session={"executor": kind, "workers": n_workers, "budget_usd": cap_usd, "job": AUDITS},
                  manifest_prefix="audit_", retry_degraded=retry_degraded)


def check_members(study: StudyInput) -> pd.DataFrame | None:
    """The audit's members when the spec has an audit (built before any trial runs), else ``None``."""
    if study.spec.audit is None:
        return None
    return audit_members(study.spec, study.path.parent.resolve())
