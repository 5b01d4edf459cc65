"""The run's response cache shared by Ray workers on any machine: an actor beside the driver.

On a cluster without a shared filesystem a worker cannot open the run's SQLite file (and SQLite's WAL
mode is not safe across hosts on a network filesystem). :class:`CacheServer` is a Ray actor pinned to
the driver's node that serves gets and puts against the run's :class:`~pvsst.sim.llm.cache.ResponseCache`;
:class:`RemoteCache` is the worker's client with the same interface, so the gateway does not know
which one it holds. Puts are sent as each call finishes (without waiting for the reply), so the calls
of a trial that was in flight when its worker died are cached and a resumed run replays them;
:meth:`RemoteCache.flush` waits until every put this worker sent has been stored.
"""
from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

from pvsst.core.errors import InputError
from pvsst.sim.llm.cache import ResponseCache


def ray_module() -> ModuleType:
    """The ``ray`` package: an ``InputError`` where the optional ``ray`` extra is not installed."""
    try:
        import ray  # lazy: the optional ray extra; only the Ray executor and its workers need it
    except ImportError:
        raise InputError("--executor", "ray", "Ray is not installed: pip install 'pvsst[ray]'") from None
    return ray


class CacheServer:
    """Gets and puts against the SQLite cache at ``path`` (run as a Ray actor on the driver's node).

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "cache.sqlite")
    >>> from pvsst.sim.llm.cache import ResponseCache
    >>> ResponseCache(path).close()
    >>> server = CacheServer(path)
    >>> server.put("k", {"model": "scripted/echo", "text": "hi"})
    >>> server.get_many(["k", "missing"])["k"]["text"], server.flush()
    ('hi', 1)
    """

    def __init__(self, path: str):
        # The driver created the file before starting this actor: not seeing it means this actor runs
        # on another machine than the driver, where a cache would be a private, lost copy.
        if not Path(path).is_file():
            raise InputError(path, "cache", "the cache server does not see the driver's run directory "
                             "(it must run on the driver's node)")
        self.cache = ResponseCache(path)

    def get(self, key: str) -> dict[str, Any] | None:
        return self.cache.get(key)

    def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        """The stored records of those ``keys`` that are cached."""
        found = {}
        for key in keys:
            record = self.cache.get(key)
            if record is not None:
                found[key] = record
        return found

    def contains(self, key: str) -> bool:
        return key in self.cache

    def put(self, key: str, record: dict[str, Any]) -> None:
        self.cache.put(key, record)

    def flush(self) -> int:
        """Entries in the file; answered after every put sent before it (actor calls run in order)."""
        return len(self.cache)

    def stats(self) -> dict[str, Any]:
        return self.cache.stats()

    def close(self) -> None:
        self.cache.close()


def start_cache_server(ray: Any, path: str) -> Any:
    """Start a :class:`CacheServer` actor for ``path`` on this (the driver's) node; return its handle.

    It takes no CPU, so it runs on a head started with ``--num-cpus 0`` too, and it is pinned to the
    driver's node (not a soft preference): the SQLite file lives on the driver's disk.

    Examples
    --------
    >>> import ray  # doctest: +SKIP
    >>> ray.init(address="127.0.0.1:6379")  # doctest: +SKIP
    >>> cache = RemoteCache(start_cache_server(ray, "runs/smoke/cache.sqlite"))  # doctest: +SKIP
    >>> cache.put("k", {"model": "scripted/echo", "text": "hi"}); cache.get("k")["text"]  # doctest: +SKIP
    'hi'
    """
    node = ray.get_runtime_context().get_node_id()
    actor = ray.remote(num_cpus=0, max_restarts=0)(CacheServer).options(
        scheduling_strategy=ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(node_id=node, soft=False))
    handle = actor.remote(path)
    try:
        ray.get(handle.flush.remote())  # fails here, on the driver, if the actor cannot open the file
    except ray.exceptions.RayError as err:
        cause = " ".join(str(err).split())[-200:]
        raise InputError("--ray-address", "cache", "the run's cache server could not open the driver's "
                         f"cache file on the driver's node: run `pvsst run` on a cluster node ({cause})") from None
    return handle


class RemoteCache:
    """A :class:`~pvsst.sim.llm.cache.ResponseCache` look-alike that talks to a :class:`CacheServer` actor.

    ``get`` answers from the batch fetched by the last :meth:`prefetch` (the gateway prefetches the
    keys of each batch of requests, one round trip), else asks the actor. ``put`` does not wait.

    Examples
    --------
    >>> worker_cache = RemoteCache(handle)  # doctest: +SKIP
    >>> worker_cache.prefetch(["k1", "k2"]); worker_cache.get("k1") is None  # doctest: +SKIP
    True
    """

    def __init__(self, server: Any):
        self.server = server
        self.path = "ray-actor"
        self._prefetched: dict[str, dict[str, Any]] = {}
        self._asked: set[str] = set()
        self.hits = 0
        self.misses = 0
        self.writes = 0

    def _ray(self):
        return ray_module()

    def prefetch(self, keys: list[str]) -> None:
        """Fetch the records of ``keys`` in one round trip for the ``get`` calls that follow."""
        self._asked = set(keys)
        self._prefetched = self._ray().get(self.server.get_many.remote(list(self._asked)))

    def get(self, key: str) -> dict[str, Any] | None:
        if key in self._asked:
            record = self._prefetched.pop(key, None)
            self._asked.discard(key)
        else:
            record = self._ray().get(self.server.get.remote(key))
        if record is None:
            self.misses += 1
        else:
            self.hits += 1
        return record

    def put(self, key: str, record: dict[str, Any]) -> None:
        self.server.put.remote(key, dict(record))  # ordered after this worker's earlier calls; no wait
        self.writes += 1

    def __contains__(self, key: str) -> bool:
        if key in self._prefetched:
            return True
        return bool(self._ray().get(self.server.contains.remote(key)))

    def flush(self) -> int:
        """Wait until every put sent from here is stored; return the entries in the file."""
        return int(self._ray().get(self.server.flush.remote()))

    def __len__(self) -> int:
        return self.flush()

    def stats(self) -> dict[str, Any]:
        return {**self._ray().get(self.server.stats.remote()), "hits": self.hits, "misses": self.misses,
                "writes": self.writes}

    def close(self) -> None:
        """Flush; the actor (and the file) stay open for the other workers until the driver ends it."""
        self.flush()
