"""Executors: run picklable tasks in this process, in a local process pool, or as Ray tasks.

The unit of parallel work is a block (the trials of one model x topic x seed, one per arm): its trials
share their first-round requests, so running them one after another in one worker replays those from
the cache instead of racing two workers to the same call. Every executor runs the same picklable
:func:`run_block`, so results do not depend on where a trial ran (the survey runner maps its units
through the same executors). Each worker process keeps one gateway
per settings (the embedded model is loaded once per process, the SQLite connection is reused).
"""
from __future__ import annotations

import concurrent.futures as cf
import itertools
import multiprocessing
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pandas as pd

from experiments.spec.design import TrialPlan
from personas.errors import InputError
from experiments.run.trial_pipeline import TrialOutcome, execute_trial

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class GatewaySettings:
    cache_path: str
    replay_only: bool = False
    max_concurrency: int = 4
    requests_per_minute: float | None = None
    max_attempts: int = 3
    timeout_s: float = 240.0
    api_base: str | None = None

    def create_cache(self) -> None:
        """Create the cache file (WAL mode, schema) in the parent, before any worker opens it."""
        from sim.llm.cache import ResponseCache

        ResponseCache(self.cache_path).close()


@dataclass(frozen=True)
class BlockTask:
    """Everything a worker needs to run the pending trials of one block (plain data, picklable)."""

    spec: dict
    spec_dir: str
    plans: tuple[TrialPlan, ...]
    run_dir: str
    gateway: GatewaySettings
    personas_path: str | None = None
    budget_usd: float | None = None      # the run's caps ...
    budget_tokens: int | None = None
    spent_usd: float = 0.0               # ... and what finished trials already spent against them
    spent_tokens: int = 0


_GATEWAYS: dict[GatewaySettings, object] = {}
_PERSONAS: dict[str, pd.DataFrame] = {}


def worker_gateway(settings: GatewaySettings):
    """This process's gateway for ``settings`` (made once per process: one model load, one connection)."""
    from sim.llm.cache import ResponseCache
    from sim.llm.gateway import Gateway

    if settings not in _GATEWAYS:
        _GATEWAYS[settings] = Gateway(
            cache=ResponseCache(settings.cache_path), replay_only=settings.replay_only,
            max_concurrency=settings.max_concurrency, requests_per_minute=settings.requests_per_minute,
            max_attempts=settings.max_attempts, timeout_s=settings.timeout_s, api_base=settings.api_base)
    return _GATEWAYS[settings]


def run_block(task: BlockTask) -> list[TrialOutcome]:
    """Run a block's trials in order in this process; a budget stop or a replay miss ends the block
    and comes back as that trial's status."""
    from experiments.spec.study import spec_from_canonical
    from sim.llm.budget import Budget, BudgetExceeded
    from sim.llm.cache import ReplayMiss

    spec = spec_from_canonical(task.spec)
    gateway = worker_gateway(task.gateway)
    capped = task.budget_usd is not None or task.budget_tokens is not None
    gateway.budget = Budget(max_usd=task.budget_usd, max_tokens=task.budget_tokens, spent_usd=task.spent_usd,
                            spent_tokens=task.spent_tokens) if capped else None
    personas = None
    if task.personas_path is not None:
        if task.personas_path not in _PERSONAS:
            _PERSONAS[task.personas_path] = pd.read_parquet(task.personas_path)
        personas = _PERSONAS[task.personas_path]
    outcomes: list[TrialOutcome] = []
    for plan in task.plans:
        try:
            outcomes.append(execute_trial(spec, plan, Path(task.run_dir), gateway, personas, Path(task.spec_dir)))
        except BudgetExceeded as err:
            outcomes.append(TrialOutcome(plan.trial_id, "budget_exceeded", str(err)))
            break
        except ReplayMiss as err:
            outcomes.append(TrialOutcome(plan.trial_id, "replay_miss", str(err)))
            break
    return outcomes


class InlineExecutor:
    """Tasks one after another in this process (``--workers 1``)."""

    name = "local"

    def map(self, fn: Callable[[T], R], tasks: Iterable[T]) -> Iterator[R]:
        for task in tasks:
            yield fn(task)

    def close(self) -> None:
        pass


class LocalExecutor:
    """A process pool of ``workers`` processes (spawned: Mesa sets the start method to spawn)."""

    name = "local"

    def __init__(self, workers: int):
        self.pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
        self.workers = workers

    def map(self, fn: Callable[[T], R], tasks: Iterable[T]) -> Iterator[R]:
        """Keep ``workers`` tasks in flight; yield results as they complete. The caller may stop
        iterating (budget) and no further task is submitted. ``fn`` must be importable (picklable)."""
        tasks = iter(tasks)
        pending = {self.pool.submit(fn, task) for task in itertools.islice(tasks, self.workers)}
        while pending:
            done, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for future in done:
                yield future.result()
                nxt = next(tasks, None)
                if nxt is not None:
                    pending.add(self.pool.submit(fn, nxt))

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class RayExecutor:
    """Ray tasks: ``ray.init()`` on this machine, or ``address`` for a running cluster."""

    name = "ray"

    def __init__(self, workers: int, address: str | None = None):
        try:
            import ray
        except ImportError:
            raise InputError("--executor", "ray", "Ray is not installed: pip install 'pvsst[ray]'") from None
        self.ray = ray
        if not ray.is_initialized():
            ray.init(address=address, num_cpus=None if address else workers, include_dashboard=False,
                     log_to_driver=False, ignore_reinit_error=True)
        self.workers = workers

    def map(self, fn: Callable[[T], R], tasks: Iterable[T]) -> Iterator[R]:
        remote = self.ray.remote(num_cpus=1)(fn)
        tasks = iter(tasks)
        pending = [remote.remote(task) for task in itertools.islice(tasks, self.workers)]
        while pending:
            done, pending = self.ray.wait(pending, num_returns=1)
            yield self.ray.get(done[0])
            nxt = next(tasks, None)
            if nxt is not None:
                pending.append(remote.remote(nxt))

    def close(self) -> None:
        self.ray.shutdown()


def make_executor(kind: str, workers: int, address: str | None = None):
    if kind == "ray":
        return RayExecutor(workers, address)
    if kind != "local":
        raise InputError("--executor", kind, "must be local or ray")
    return InlineExecutor() if workers <= 1 else LocalExecutor(workers)
