"""A worker's gateway: the plain-data settings a worker builds it from, and one gateway per process.

The run kernel hands every payload the run's :class:`GatewaySettings` (its gateway configuration, its
response cache and the request protocol's ``max_attempts``); a worker process builds its
:class:`~pvsst.sim.llm.gateway.Gateway` from them once (one model load, one cache connection) with
:func:`worker_gateway`. On Ray the cache is a server actor on the driver's node, never a path.

Examples
--------
>>> from pvsst.sim.llm.config import GatewayConfig
>>> settings = GatewaySettings(cache_path=None, config=GatewayConfig(max_concurrency=2))
>>> worker_gateway(settings) is worker_gateway(settings), worker_gateway(settings).max_concurrency
(True, 2)
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pvsst.experiments.run.ray_cache import RemoteCache
from pvsst.sim.llm.budget import Budget
from pvsst.sim.llm.cache import ResponseCache
from pvsst.sim.llm.config import GatewayConfig
from pvsst.sim.llm.gateway import Gateway


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
        if self.cache_path is not None:
            ResponseCache(self.cache_path).close()

    def dropped_rows(self) -> list[dict]:
        """The corrupt rows the run's cache dropped (and had asked again), from the file itself."""
        if self.cache_path is None or not Path(self.cache_path).is_file():
            return []
        cache = ResponseCache(self.cache_path)
        try:
            return cache.dropped()
        finally:
            cache.close()

    def open_cache(self):
        """This worker's cache: the SQLite file, a client of the driver's cache server, or none (no path)."""
        if self.cache_server is not None:
            return RemoteCache(self.cache_server)
        if self.cache_path is None:
            return None
        return ResponseCache(self.cache_path)


_GATEWAYS: dict[tuple, object] = {}


def worker_gateway(settings: GatewaySettings):
    """This process's gateway for ``settings`` (made once per process: one model load, one connection)."""
    key = settings.key()
    if key not in _GATEWAYS:
        _GATEWAYS[key] = Gateway(settings.config, settings.open_cache(), replay_only=settings.replay_only,
                                 max_attempts=settings.max_attempts)
    return _GATEWAYS[key]


def close_worker_gateways() -> None:
    """Close and forget this process's gateways (their cache connections and event loops).

    An in-process executor calls it when its run ends, so a process that runs one study after another (a
    notebook, a test session) holds no connection to a finished run's cache.

    Examples
    --------
    >>> _ = worker_gateway(GatewaySettings(cache_path=None))
    >>> close_worker_gateways()
    >>> len(_GATEWAYS)
    0
    """
    while _GATEWAYS:
        _, gateway = _GATEWAYS.popitem()
        gateway.close()


def cap_budget(gateway, max_usd: float | None, max_tokens: int | None, spent_usd: float, spent_tokens: int) -> None:
    """Give a worker's gateway the run's caps, less what finished units already spent (no cap: no budget)."""
    capped = max_usd is not None or max_tokens is not None
    gateway.budget = Budget(max_usd=max_usd, max_tokens=max_tokens, spent_usd=spent_usd,
                            spent_tokens=spent_tokens) if capped else None
