"""Executors: run picklable tasks in this process, in a local process pool, or as Ray tasks.

The unit of parallel work is a block (the trials of one model x topic x seed, one per arm): its trials
share their first-round requests, so running them one after another in one worker replays those from
the cache instead of racing two workers to the same call. Every executor runs the same picklable
:func:`run_block`, so results do not depend on where a trial ran (the survey runner maps its units
through the same executors). Each worker process keeps one gateway
per settings (the embedded model is loaded once per process, the cache connection is reused).

Workers receive plain data only (the frozen spec, the block's plans, the persona table, the bytes of the
spec's materials and edge list (:mod:`pvsst.experiments.run.study_files`), gateway settings) and return each finished trial's tables (on Ray, streamed back trial by trial); the driver
alone writes the run store. On Ray no
payload holds a path of the run: the response cache is reached through a
:class:`~pvsst.experiments.run.ray_cache.CacheServer` actor on the driver's node, so workers on machines that
do not share the driver's disk read and fill the same cache.
"""
from __future__ import annotations

import concurrent.futures as cf
import itertools
import multiprocessing
from concurrent.futures.process import BrokenProcessPool
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import pandas as pd

from pvsst.experiments.spec.design import ScheduledTrial
from pvsst.core.errors import InputError
from pvsst.experiments.run.run_guard import ignore_interrupts, spawning_quietly, start_resource_tracker_quietly
from pvsst.experiments.run.study_files import StudyFiles
from pvsst.experiments.run.trial_pipeline import TrialOutcome, execute_trial
from pvsst.sim.llm.budget import BudgetExceeded
from pvsst.sim.llm.config import GatewayConfig
from pvsst.sim.llm.cache import ReplayMiss
from pvsst.sim.llm.stops import RunStop

STOP_STATUSES = (BudgetExceeded.status, ReplayMiss.status)
"""Trial statuses a run-level stop leaves: the block (and the run) ends there."""

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class GatewaySettings:
    """What a worker builds its gateway from: the run's gateway configuration, its cache and the
    request protocol's ``max_attempts`` (plain data, picklable)."""

    cache_path: str | None             # the run's SQLite file (local executors), or None ...
    config: GatewayConfig = GatewayConfig()
    replay_only: bool = False
    max_attempts: int = 3
    cache_server: Any = None           # ... a Ray actor handle serving that file (the Ray executor)

    def key(self) -> tuple:
        """A hashable identity of these settings (the configuration model holds lists)."""
        return self.cache_path, self.config.model_dump_json(), self.replay_only, self.max_attempts, self.cache_server

    def create_cache(self) -> None:
        """Create the cache file (WAL mode, schema) in the parent, before any worker opens it."""
        from pvsst.sim.llm.cache import ResponseCache

        if self.cache_path is not None:
            ResponseCache(self.cache_path).close()

    def open_cache(self):
        """This worker's cache: the SQLite file, or a client of the driver's cache server."""
        if self.cache_server is not None:
            from pvsst.experiments.run.ray_cache import RemoteCache

            return RemoteCache(self.cache_server)
        from pvsst.sim.llm.cache import ResponseCache

        return ResponseCache(self.cache_path)


@dataclass(frozen=True)
class BlockTask:
    """Everything a worker needs to run the pending trials of one block (plain data, picklable)."""

    spec: dict                           # the canonical spec
    plans: tuple[ScheduledTrial, ...]
    gateway: GatewaySettings
    files: StudyFiles = StudyFiles()     # the spec's materials and edge list, as bytes (never their paths)
    personas: pd.DataFrame | None = None  # the run's persona table itself, never its path
    budget_usd: float | None = None      # the run's caps ...
    budget_tokens: int | None = None
    spent_usd: float = 0.0               # ... and what finished trials already spent against them
    spent_tokens: int = 0
    spec_sha256: str = ""                # the canonical spec's hash: a worker rebuilds the spec once per hash


_GATEWAYS: dict[tuple, object] = {}
_SPECS: dict[str, object] = {}


def worker_gateway(settings: GatewaySettings):
    """This process's gateway for ``settings`` (made once per process: one model load, one connection)."""
    from pvsst.sim.llm.gateway import Gateway

    key = settings.key()
    if key not in _GATEWAYS:
        _GATEWAYS[key] = Gateway.from_config(settings.config, settings.open_cache(), replay_only=settings.replay_only,
                                             max_attempts=settings.max_attempts)
    return _GATEWAYS[key]


def run_block_trials(task: BlockTask) -> Iterator[list[TrialOutcome]]:
    """Run a block's trials in order in this process, yielding each trial's outcome (as a one-item list)
    as it finishes; a done one carries its tables, for the driver to write. A run-level stop
    (:class:`~pvsst.sim.llm.stops.RunStop`: budget spent, replay miss) ends the block and comes back as that
    trial's status. With a remote cache, every put of a trial is stored before its outcome is yielded."""
    from pvsst.experiments.spec.study import spec_from_canonical
    from pvsst.sim.llm.budget import Budget

    if task.spec_sha256 not in _SPECS:
        _SPECS.clear()  # one study per run: keep only the current spec
        _SPECS[task.spec_sha256] = spec_from_canonical(task.spec)
    spec = _SPECS[task.spec_sha256]
    gateway = worker_gateway(task.gateway)
    capped = task.budget_usd is not None or task.budget_tokens is not None
    gateway.budget = Budget(max_usd=task.budget_usd, max_tokens=task.budget_tokens, spent_usd=task.spent_usd,
                            spent_tokens=task.spent_tokens) if capped else None
    flush = getattr(gateway.cache, "flush", None)
    for plan in task.plans:
        try:
            outcome = execute_trial(spec, plan, gateway, task.personas, files=task.files)
        except RunStop as err:
            outcome = TrialOutcome(plan.trial_id, err.status, str(err))
        if flush is not None:
            flush()
        yield [outcome]
        if outcome.status in STOP_STATUSES:
            return


def run_block(task: BlockTask) -> list[TrialOutcome]:
    """:func:`run_block_trials` as one list (for executors that return a task's result at its end)."""
    return [outcome for outcomes in run_block_trials(task) for outcome in outcomes]


def remaining_block(task: BlockTask, delivered: list[list[TrialOutcome]]) -> BlockTask | None:
    """The block of ``task``'s trials whose outcome has not come back yet (``None`` if none is left).

    Examples
    --------
    >>> from pvsst.experiments.spec.design import expand
    >>> from pvsst.experiments.spec.study import load_spec
    >>> plans = expand(load_spec("experiments/specs/scripted_smoke.yaml")).trials[:3]
    >>> task = BlockTask(spec={}, plans=tuple(plans), gateway=GatewaySettings(cache_path=None))
    >>> rest = remaining_block(task, [[TrialOutcome(plans[0].trial_id, "done")]])
    >>> [p.trial_id for p in rest.plans] == [p.trial_id for p in plans[1:]]
    True
    """
    back = {outcome.trial_id for outcomes in delivered for outcome in outcomes}
    rest = tuple(plan for plan in task.plans if plan.trial_id not in back)
    return replace(task, plans=rest) if rest else None


def lost_block(task: BlockTask, error: BaseException) -> list[TrialOutcome]:
    """The outcomes of a block whose worker was lost (its process or node died): every trial failed.

    Their finished calls are in the run's cache, so a rerun replays them.

    Examples
    --------
    >>> from pvsst.experiments.spec.design import expand
    >>> from pvsst.experiments.spec.study import load_spec
    >>> plans = expand(load_spec("experiments/specs/scripted_smoke.yaml")).trials[:2]
    >>> task = BlockTask(spec={}, plans=tuple(plans), gateway=GatewaySettings(cache_path=None))
    >>> [(o.status, o.error) for o in lost_block(task, RuntimeError("node died"))][0]
    ('failed', 'worker lost: RuntimeError: node died')
    """
    line = " ".join(f"{type(error).__name__}: {error}".split())[:300]
    return [TrialOutcome(plan.trial_id, "failed", f"worker lost: {line}") for plan in task.plans]


class InlineExecutor:
    """Tasks one after another in this process (``--workers 1``)."""

    name = "local"

    def map(self, fn: Callable[[T], R], tasks: Iterable[T],
            on_error: Callable[[T, BaseException], R] | None = None) -> Iterator[R]:
        for task in tasks:
            yield fn(task)

    def share_cache(self, settings: GatewaySettings) -> GatewaySettings:
        """Settings for this executor's workers: in-process, the SQLite file itself."""
        return settings

    def close(self, abort: bool = False) -> None:
        pass


class LocalExecutor:
    """A process pool of ``workers`` processes (spawned: Mesa sets the start method to spawn)."""

    name = "local"

    def __init__(self, workers: int):
        start_resource_tracker_quietly()
        self.pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                           initializer=ignore_interrupts)
        self.workers = workers

    def map(self, fn: Callable[[T], R], tasks: Iterable[T],
            on_error: Callable[[T, BaseException], R] | None = None) -> Iterator[R]:
        """Keep ``workers`` tasks in flight; yield results as they complete. The caller may stop
        iterating (budget) and no further task is submitted. ``fn`` must be importable (picklable).
        A task whose worker process died yields ``on_error(task, error)`` (raises without it)."""
        tasks = iter(tasks)
        pending: dict[cf.Future, T] = {}
        for task in itertools.islice(tasks, self.workers):
            pending[self._submit(fn, task)] = task
        while pending:
            done, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for future in done:
                task = pending.pop(future)
                try:
                    result = future.result()
                except BrokenProcessPool as err:
                    if on_error is None:
                        raise
                    result = on_error(task, err)
                yield result
                nxt = next(tasks, None)
                if nxt is not None:
                    pending[self._submit(fn, nxt)] = nxt

    def _submit(self, fn: Callable[[T], R], task: T) -> cf.Future:
        try:
            with spawning_quietly():  # a submit may start the worker processes
                return self.pool.submit(fn, task)
        except BrokenProcessPool as err:  # a worker died earlier: this task fails the same way
            future: cf.Future = cf.Future()
            future.set_exception(err)
            return future

    share_cache = InlineExecutor.share_cache

    def close(self, abort: bool = False) -> None:
        """Wait for the running tasks; with ``abort`` (an interrupted run) stop the workers at once:
        they write nothing but the response cache, whose unfinished transaction SQLite rolls back."""
        if abort:
            workers = {*(getattr(self.pool, "_processes", None) or {}).values(), *multiprocessing.active_children()}
            for process in workers:
                process.kill()
            for process in workers:
                process.join(timeout=5)
            # the pool's manager thread may wait on a queue its killed workers held: do not join it
            self.pool.shutdown(wait=False, cancel_futures=True)
            return
        self.pool.shutdown(wait=True, cancel_futures=True)


class RayExecutor:
    """Ray tasks: ``ray.init()`` on this machine, or ``address`` for a running cluster."""

    name = "ray"

    def __init__(self, workers: int, address: str | None = None, max_retries: int = 3):
        try:
            import ray
        except ImportError:
            raise InputError("--executor", "ray", "Ray is not installed: pip install 'pvsst[ray]'") from None
        self.ray = ray
        self._owns_ray = not ray.is_initialized()  # a Ray the caller started is left running
        if self._owns_ray:
            ray.init(address=address, num_cpus=None if address else workers, include_dashboard=False,
                     log_to_driver=False, ignore_reinit_error=True)
        self.workers = workers
        self.max_retries = max_retries
        self._cache_server = None

    def map(self, fn: Callable[[T], R], tasks: Iterable[T],
            on_error: Callable[[T, BaseException], R] | None = None) -> Iterator[R]:
        """Keep ``workers`` tasks in flight; yield results as they complete. Ray reruns a task whose
        worker or node died (``max_retries``); one that still fails yields ``on_error(task, error)``."""
        remote = self.ray.remote(num_cpus=1, max_retries=self.max_retries)(fn)
        tasks = iter(tasks)
        pending = {remote.remote(task): task for task in itertools.islice(tasks, self.workers)}
        while pending:
            done, _ = self.ray.wait(list(pending), num_returns=1)
            task = pending.pop(done[0])
            try:
                result = self.ray.get(done[0])
            except self.ray.exceptions.RayError as err:
                if on_error is None or isinstance(err, self.ray.exceptions.RayTaskError):
                    raise  # an exception of the task itself (a bug): not a lost worker
                result = on_error(task, err)
            yield result
            nxt = next(tasks, None)
            if nxt is not None:
                pending[remote.remote(nxt)] = nxt

    def map_streaming(self, fn: Callable[[T], Iterator[R]], tasks: Iterable[T],
                      resume: Callable[[T, list[R]], T | None],
                      on_error: Callable[[T, BaseException], R]) -> Iterator[R]:
        """Like :meth:`map` for a generator ``fn``: each item comes back as soon as it is yielded (a Ray
        streaming generator), so a trial reaches the driver when it finishes, not with its block. A
        task whose worker or node died is resubmitted as ``resume(task, items it delivered)`` (up to
        ``max_retries`` times; ``None``: nothing left); after that ``on_error`` answers for the rest."""
        remote = self.ray.remote(num_cpus=1, max_retries=0)(fn)
        tasks = iter(tasks)
        pending: dict[Any, tuple[T, list[R], int]] = {}
        for task in itertools.islice(tasks, self.workers):
            pending[remote.remote(task)] = (task, [], 0)
        while pending:
            ready, _ = self.ray.wait(list(pending), num_returns=1)
            stream = ready[0]
            task, delivered, tries = pending[stream]
            try:
                item = self.ray.get(next(stream))
            except StopIteration:
                item = None
            except self.ray.exceptions.RayError as err:
                if isinstance(err, self.ray.exceptions.RayTaskError):
                    raise  # an exception of the task itself (a bug): not a lost worker
                del pending[stream]
                rest = resume(task, delivered)
                if rest is not None and tries < self.max_retries:
                    pending[remote.remote(rest)] = (rest, [], tries + 1)
                    continue
                if rest is not None:
                    yield on_error(rest, err)
            else:
                delivered.append(item)
                yield item
                continue
            pending.pop(stream, None)  # this task is over: the slot takes the next one
            nxt = next(tasks, None)
            if nxt is not None:
                pending[remote.remote(nxt)] = (nxt, [], 0)

    def share_cache(self, settings: GatewaySettings) -> GatewaySettings:
        """Settings whose cache is a server actor on this node for the run's file, not the file's path."""
        from pvsst.experiments.run.ray_cache import start_cache_server

        self._cache_server = start_cache_server(self.ray, settings.cache_path)
        return replace(settings, cache_path=None, cache_server=self._cache_server)

    def close(self, abort: bool = False) -> None:
        if self._cache_server is not None:
            try:
                self.ray.get(self._cache_server.close.remote())
            except self.ray.exceptions.RayError:
                pass
            self.ray.kill(self._cache_server)
            self._cache_server = None
        if self._owns_ray:
            self.ray.shutdown()


def make_executor(kind: str, workers: int, address: str | None = None):
    if kind == "ray":
        return RayExecutor(workers, address)
    if kind != "local":
        raise InputError("--executor", kind, "must be local or ray")
    return InlineExecutor() if workers <= 1 else LocalExecutor(workers)
