"""Executors: run a picklable function over picklable payloads in this process, in a local process pool,
or as Ray tasks.

An executor knows nothing of what it runs (study blocks, survey units): the run kernel
(:mod:`pvsst.experiments.run.kernel`) gives it a picklable callable (the job's worker's ``run``) and
payloads and gets the results back as they finish. ``share_cache`` adapts the run's gateway settings to where the
workers are: on Ray no
payload holds a path of the run: the response cache is reached through a
:class:`~pvsst.experiments.run.ray_cache.CacheServer` actor on the driver's node, so workers on machines that
do not share the driver's disk read and fill the same cache.

Examples
--------
>>> list(make_executor("local", 1).map(abs, [-1, 2, -3]))
[1, 2, 3]
"""
from __future__ import annotations

import concurrent.futures as cf
import itertools
import multiprocessing
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from typing import Any, TypeVar

from pvsst.core.errors import InputError
from pvsst.experiments.run.ray_cache import ray_module, start_cache_server
from pvsst.experiments.run.run_guard import ignore_interrupts, spawning_quietly, start_resource_tracker_quietly
from pvsst.experiments.run.worker_gateway import GatewaySettings, close_worker_gateways

T = TypeVar("T")
R = TypeVar("R")


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
        close_worker_gateways()


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
            # A worker killed while sending a result leaves half a message in the result pipe: the pool's
            # manager thread then blocks reading the rest, and Python joins that thread at exit (a hang
            # after the run's last line). This process holds the pipe's only live write end: closing it
            # ends that read (EOF), so the thread sees a broken pool and ends. Not joined here either.
            result_queue = getattr(self.pool, "_result_queue", None)
            writer = getattr(result_queue, "_writer", None)
            if writer is not None:
                writer.close()
            self.pool.shutdown(wait=False, cancel_futures=True)
            return
        self.pool.shutdown(wait=True, cancel_futures=True)


class RayExecutor:
    """Ray tasks: ``ray.init()`` on this machine, or ``address`` for a running cluster."""

    name = "ray"

    def __init__(self, workers: int, address: str | None = None, max_retries: int = 3):
        self.ray = ray = ray_module()
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
        remote = self.ray.remote(num_cpus=1, max_retries=self.max_retries)(call)
        tasks = iter(tasks)
        pending = {remote.remote(fn, task): task for task in itertools.islice(tasks, self.workers)}
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
                pending[remote.remote(fn, nxt)] = nxt

    def map_streaming(self, fn: Callable[[T], Iterator[R]], tasks: Iterable[T],
                      resume: Callable[[T, list[R]], T | None],
                      on_error: Callable[[T, BaseException], R]) -> Iterator[R]:
        """Like :meth:`map` for a generator ``fn``: each item comes back as soon as it is yielded (a Ray
        streaming generator), so a trial reaches the driver when it finishes, not with its block. A
        task whose worker or node died is resubmitted as ``resume(task, items it delivered)`` (up to
        ``max_retries`` times; ``None``: nothing left); after that ``on_error`` answers for the rest."""
        remote = self.ray.remote(num_cpus=1, max_retries=0)(call_streaming)
        tasks = iter(tasks)
        pending: dict[Any, tuple[T, list[R], int]] = {}
        for task in itertools.islice(tasks, self.workers):
            pending[remote.remote(fn, task)] = (task, [], 0)
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
                    pending[remote.remote(fn, rest)] = (rest, [], tries + 1)
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
                pending[remote.remote(fn, nxt)] = (nxt, [], 0)

    def share_cache(self, settings: GatewaySettings) -> GatewaySettings:
        """Settings whose cache is a server actor on this node for the run's file, not the file's path."""
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


def call(fn: Callable[[T], R], task: T) -> R:
    """``fn(task)``: a Ray task is a plain function; ``fn`` (a worker's method) travels as its argument."""
    return fn(task)


def call_streaming(fn: Callable[[T], Iterator[R]], task: T) -> Iterator[R]:
    """``fn(task)``'s items, as a Ray streaming generator (a generator function)."""
    yield from fn(task)


def make_executor(kind: str, workers: int, address: str | None = None):
    if kind == "ray":
        return RayExecutor(workers, address)
    if kind != "local":
        raise InputError("--executor", kind, "must be local or ray")
    return InlineExecutor() if workers <= 1 else LocalExecutor(workers)
