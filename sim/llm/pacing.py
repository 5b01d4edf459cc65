"""Requests-per-minute pacing: a small token bucket shared by the coroutines of one gateway."""
from __future__ import annotations

import asyncio
import time


class RatePacer:
    """Lets at most ``requests_per_minute`` calls start per minute, with bursts of up to ``burst``.

    Tokens refill continuously at ``requests_per_minute / 60`` per second; :meth:`acquire` waits until
    one is available and takes it. Waiting is computed, not polled, and the bucket is usable from any
    event loop (it holds no loop-bound primitive).

    Examples
    --------
    >>> import asyncio
    >>> pacer = RatePacer(requests_per_minute=6000, burst=1)   # one start per 10 ms
    >>> async def three():
    ...     for _ in range(3):
    ...         await pacer.acquire()
    >>> t0 = time.monotonic(); asyncio.run(three()); time.monotonic() - t0 >= 0.019
    True
    """

    def __init__(self, requests_per_minute: float, burst: int = 1):
        if requests_per_minute <= 0:
            raise ValueError(f"requests_per_minute must be > 0, got {requests_per_minute}")
        self.rate_per_s = requests_per_minute / 60.0
        self.burst = max(1, int(burst))
        self._tokens = float(self.burst)
        self._updated = time.monotonic()

    def _reserve(self) -> float:
        """Take a token now (possibly going negative) and return how long to wait for it."""
        now = time.monotonic()
        self._tokens = min(self.burst, self._tokens + (now - self._updated) * self.rate_per_s)
        self._updated = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate_per_s

    async def acquire(self) -> None:
        delay = self._reserve()
        if delay > 0:
            await asyncio.sleep(delay)
