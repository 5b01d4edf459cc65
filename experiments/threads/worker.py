"""A thread study's unit of work, one thread: the task a worker receives and :class:`ThreadWorker`.

Workers receive plain data only (the canonical spec, the thread ids to run, the run's persona table,
the bytes of the spec's own thread templates, gateway settings), plan the study's threads from the
master seed (:func:`pvsst.sim.threads.plan.plan_threads`: cheap, and the same on every worker), run
theirs through :func:`pvsst.sim.threads.run.run_thread` and return each as a
:class:`~pvsst.experiments.run.kernel.UnitResult`; the run kernel alone writes the run store.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, replace

import pandas as pd

from pvsst.experiments.run.kernel import UnitResult, lost_units
from pvsst.experiments.run.worker_gateway import GatewaySettings, cap_budget, worker_gateway
from pvsst.experiments.spec.thread_study import ThreadStudySpec, thread_spec_from_canonical
from pvsst.experiments.study.files import StudyFiles
from pvsst.experiments.study.trial_pipeline import call_accounting, call_totals
from pvsst.sim.llm.budget import BudgetExceeded
from pvsst.sim.llm.cache import ReplayMiss
from pvsst.sim.llm.stops import RunStop
from pvsst.sim.threads.plan import ThreadPlan, plan_threads
from pvsst.sim.threads.run import run_thread

STOP_STATUSES = (BudgetExceeded.status, ReplayMiss.status)


@dataclass(frozen=True)
class ThreadTask:
    """Everything a worker needs to run some threads of a study (plain data, picklable)."""

    spec: dict                             # the canonical thread spec
    thread_ids: tuple[str, ...]
    gateway: GatewaySettings
    personas: pd.DataFrame                 # the run's persona table itself, never its path
    files: StudyFiles = StudyFiles()       # the spec's own thread templates, as bytes
    budget_usd: float | None = None
    budget_tokens: int | None = None
    spent_usd: float = 0.0
    spent_tokens: int = 0


def study_plans(spec: ThreadStudySpec, personas: pd.DataFrame, materials: str | None = None) -> list[ThreadPlan]:
    """Every thread of the study, planned from its master seed."""
    return plan_threads(spec.threads, personas, spec.topic_list(), seed=spec.seed, model_name=spec.model,
                        materials=materials)


def execute_thread(plan: ThreadPlan, gateway) -> UnitResult:
    """Run one thread; failures come back as a status (a run-level stop is raised); nothing is written."""
    started = time.perf_counter()
    try:
        result = run_thread(plan, gateway)
    except RunStop:
        raise
    except Exception as err:  # noqa: BLE001 - a failed thread is recorded, the others go on
        return UnitResult(plan.thread_id, "failed", f"{type(err).__name__}: {err}",
                          elapsed_s=time.perf_counter() - started)
    totals = call_totals(result.llm_calls)
    accounting = call_accounting(result.llm_calls)
    return UnitResult(plan.thread_id, "done", calls=totals["n_calls"], cache_hits=totals["cache_hits"],
                      failed_calls=accounting.pop("failed_calls", 0), cost_usd=totals["cost_usd"],
                      tokens=totals["prompt_tokens"] + totals["completion_tokens"],
                      elapsed_s=time.perf_counter() - started, tables=result.tables(), record=accounting)


class ThreadWorker:
    """The thread job's worker (:class:`~pvsst.experiments.run.kernel.StreamingWorker`): runs a task's
    threads in order in this process, yielding each as it finishes."""

    def stream(self, task: ThreadTask) -> Iterator[list[UnitResult]]:
        spec = thread_spec_from_canonical(task.spec)
        staged = task.files.stage()
        materials = str(staged.materials_dir) if staged.materials_dir is not None else None
        plans = {plan.thread_id: plan for plan in study_plans(spec, task.personas, materials)}
        gateway = worker_gateway(task.gateway)
        cap_budget(gateway, task.budget_usd, task.budget_tokens, task.spent_usd, task.spent_tokens)
        flush = getattr(gateway.cache, "flush", None)
        for thread_id in task.thread_ids:
            try:
                result = execute_thread(plans[thread_id], gateway)
            except RunStop as err:
                result = UnitResult(thread_id, err.status, str(err))
            if flush is not None:
                flush()
            yield [result]
            if result.status in STOP_STATUSES:
                return

    def run(self, task: ThreadTask) -> list[UnitResult]:
        return [result for results in self.stream(task) for result in results]

    def remaining(self, task: ThreadTask, delivered: list[list[UnitResult]]) -> ThreadTask | None:
        back = {result.unit_id for results in delivered for result in results}
        rest = tuple(t for t in task.thread_ids if t not in back)
        return replace(task, thread_ids=rest) if rest else None

    def lost(self, task: ThreadTask, error: BaseException) -> list[UnitResult]:
        return lost_units(task.thread_ids, error)
