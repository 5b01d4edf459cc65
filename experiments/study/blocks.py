"""A study's unit of parallel work: a block (the trials of one model x topic x seed, one per arm).

A block's trials share their first-round requests, so running them one after another in one worker
replays those from the cache instead of racing two workers to the same call. Every executor runs the
same :class:`BlockWorker`: ``run`` (or, on Ray, ``stream``, which sends each trial back as it finishes),
so results do not depend on where a trial ran.

Workers receive plain data only (the frozen spec, the block's plans, the persona table, the bytes of the
spec's materials, edge list and identity vectors (:mod:`pvsst.experiments.study.files`), gateway settings) and return
each finished trial as a :class:`~pvsst.experiments.run.kernel.UnitResult`; the run kernel alone writes
the run store.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import pandas as pd

from pvsst.experiments.run.kernel import UnitResult, lost_units
from pvsst.experiments.run.summary import RunSummary
from pvsst.experiments.run.worker_gateway import GatewaySettings, cap_budget, worker_gateway
from pvsst.experiments.spec.design import Design, ScheduledTrial
from pvsst.experiments.spec.study import spec_from_canonical
from pvsst.experiments.study.files import StudyFiles
from pvsst.experiments.study.trial_pipeline import execute_trial
from pvsst.sim.llm.budget import BudgetExceeded
from pvsst.sim.llm.cache import ReplayMiss
from pvsst.sim.llm.stops import RunStop

STOP_STATUSES = (BudgetExceeded.status, ReplayMiss.status)
"""Trial statuses a run-level stop leaves: the block (and the run) ends there."""


@dataclass(frozen=True)
class BlockTask:
    """Everything a worker needs to run the pending trials of one block (plain data, picklable)."""

    spec: dict                           # the canonical spec
    plans: tuple[ScheduledTrial, ...]
    gateway: GatewaySettings
    files: StudyFiles = StudyFiles()     # the spec's materials, edge list and vectors, as bytes (never paths)
    personas: pd.DataFrame | None = None  # the run's persona table itself, never its path
    budget_usd: float | None = None      # the run's caps ...
    budget_tokens: int | None = None
    spent_usd: float = 0.0               # ... and what finished trials already spent against them
    spent_tokens: int = 0
    spec_sha256: str = ""                # the canonical spec's hash: a worker rebuilds the spec once per hash


_SPECS: dict[str, object] = {}


def block_tasks(design: Design, pending: list[str], summary: RunSummary, one_trial_each: bool,
                template: BlockTask) -> Iterator[BlockTask]:
    """The pending trials as block tasks (``template`` with their plans), blocks in run order and a
    block's trials in run order (one task per trial with ``one_trial_each``); each task carries what the
    finished trials spent so far against the caps (read as the executor takes the task)."""
    wanted = set(pending)
    blocks: dict[str, list] = {}
    for plan in design.trials:
        if plan.trial_id in wanted:
            blocks.setdefault(plan.block_id, []).append(plan)
    groups = [[p] for plans in blocks.values() for p in plans] if one_trial_each else blocks.values()
    for plans in groups:
        yield replace(template, plans=tuple(plans), spent_usd=summary.cost_usd, spent_tokens=summary.tokens)


class BlockWorker:
    """The study job's worker (:class:`~pvsst.experiments.run.kernel.StreamingWorker`): runs a block's
    trials in order in this process, each through :func:`~pvsst.experiments.study.trial_pipeline.execute_trial`."""

    def stream(self, task: BlockTask) -> Iterator[list[UnitResult]]:
        """Run the block's trials, yielding each trial's result (as a one-item list) as it finishes. A
        run-level stop (:class:`~pvsst.sim.llm.stops.RunStop`: budget spent, replay miss) ends the block
        and comes back as that trial's status. With a remote cache, every put of a trial is stored before
        its result is yielded."""
        if task.spec_sha256 not in _SPECS:
            _SPECS.clear()  # one study per run: keep only the current spec
            _SPECS[task.spec_sha256] = spec_from_canonical(task.spec)
        spec = _SPECS[task.spec_sha256]
        gateway = worker_gateway(task.gateway)
        cap_budget(gateway, task.budget_usd, task.budget_tokens, task.spent_usd, task.spent_tokens)
        flush = getattr(gateway.cache, "flush", None)
        for plan in task.plans:
            try:
                result = execute_trial(spec, plan, gateway, task.personas, files=task.files)
            except RunStop as err:
                result = UnitResult(plan.trial_id, err.status, str(err))
            if flush is not None:
                flush()
            yield [result]
            if result.status in STOP_STATUSES:
                return

    def run(self, task: BlockTask) -> list[UnitResult]:
        """:meth:`stream` as one list (for executors that return a task's result at its end)."""
        return [result for results in self.stream(task) for result in results]

    def remaining(self, task: BlockTask, delivered: list[list[UnitResult]]) -> BlockTask | None:
        """The block of ``task``'s trials whose result has not come back yet (``None`` if none is left).

        Examples
        --------
        >>> from pvsst.experiments.spec.design import expand
        >>> from pvsst.experiments.spec.study import load_spec
        >>> plans = expand(load_spec("experiments/specs/scripted_smoke.yaml")).trials[:3]
        >>> task = BlockTask(spec={}, plans=tuple(plans), gateway=GatewaySettings(cache_path=None))
        >>> rest = BlockWorker().remaining(task, [[UnitResult(plans[0].trial_id, "done")]])
        >>> [p.trial_id for p in rest.plans] == [p.trial_id for p in plans[1:]]
        True
        """
        back = {result.unit_id for results in delivered for result in results}
        rest = tuple(plan for plan in task.plans if plan.trial_id not in back)
        return replace(task, plans=rest) if rest else None

    def lost(self, task: BlockTask, error: BaseException) -> list[UnitResult]:
        """The results of a block whose worker was lost (its process or node died): every trial failed.

        Examples
        --------
        >>> from pvsst.experiments.spec.design import expand
        >>> from pvsst.experiments.spec.study import load_spec
        >>> plans = expand(load_spec("experiments/specs/scripted_smoke.yaml")).trials[:2]
        >>> task = BlockTask(spec={}, plans=tuple(plans), gateway=GatewaySettings(cache_path=None))
        >>> [(r.status, r.error) for r in BlockWorker().lost(task, RuntimeError("node died"))][0]
        ('failed', 'worker lost: RuntimeError: node died')
        """
        return lost_units([plan.trial_id for plan in task.plans], error)
