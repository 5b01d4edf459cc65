"""The LLM gateway: every model call of a run goes through one :class:`Gateway`.

It executes :class:`~pvsst.sim.llm.types.LLMRequest` s through litellm (scripted providers in-process) and
adds what a preregistered run needs: a content-addressed response cache, structured output (parse,
validate, retry with the next seed), transport retries with backoff, per-call timeouts, a concurrency
limit, requests-per-minute pacing, a budget cap, and one provenance record per request.
"""
from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from pvsst.core.errors import InputError
from pvsst.core.redaction import redact
from pvsst.sim.llm.budget import Budget, BudgetExceeded
from pvsst.sim.llm.cache import ReplayMiss, ResponseCache
from pvsst.sim.llm.config import GatewayConfig
from pvsst.sim.llm.endpoints import EndpointPool
from pvsst.sim.llm.mode_sender import ModeRejected, ModeSender
from pvsst.sim.llm.pacing import RatePacer
from pvsst.sim.llm.providers.registry import ensure_runnable, ensure_steerable
from pvsst.sim.llm.structured import parse_lenient, parse_reply
from pvsst.sim.llm.structured_modes import MODES, StructuredModes
from pvsst.sim.llm.transport_errors import is_retryable, one_line, retry_after_s, transport_status
from pvsst.sim.llm.types import (
    STATUS_OK,
    STATUS_REFUSAL,
    STATUS_TRUNCATED,
    CallRecord,
    LLMRequest,
    LLMResult,
    ProviderReply,
    canonical_json,
)


def call_id_for(request: LLMRequest) -> str:
    """A deterministic id: sha256 of the cache key and the provenance tags, first 16 hex digits.

    Examples
    --------
    >>> r = LLMRequest(model_name="scripted/echo", messages=({"role": "user", "content": "x"},), trial_id="t1")
    >>> call_id_for(r) == call_id_for(r), len(call_id_for(r))
    (True, 16)
    """
    tags = canonical_json([request.trial_id, request.round, request.agent_id, request.phase])
    return hashlib.sha256(f"{request.cache_key()}|{tags}".encode()).hexdigest()[:16]


async def _cancel_other_tasks() -> None:
    pending = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)


SCRIPTED_PREFIX = "scripted/"

REFERENCE_TRIES = 3
"""Tries of a request under ``transport_retries: reference`` (the reference's HTTP layer), first included."""
REFERENCE_WAIT_STEP_S = 1.5
"""Under ``transport_retries: reference`` the wait after failed try ``i`` is ``i`` times this (1.5, 3, 4.5 s)."""


_NEVER_RETRIED = (InputError, BudgetExceeded, ModeRejected)  # ours, not the provider's


class _TransportFailure(Exception):
    def __init__(self, status: str, tries: int, error: str, mode: str = ""):
        super().__init__(error)
        self.status, self.tries, self.error, self.mode = status, tries, error, mode




class Gateway:
    """Executes model requests with cache, structured output, retries, limits, budget and provenance.

    Parameters
    ----------
    config
        How the models are called (:class:`~pvsst.sim.llm.config.GatewayConfig`): concurrency, pacing,
        per-try timeout, model servers (``api_base`` or ``endpoints``) and structured output. Its
        ``max_concurrency`` is lowered to what the endpoints take together when they all set a limit.
    cache
        Response cache; successful replies are stored and later served without a provider call.
    replay_only
        Serve only from the cache: a miss raises :class:`~pvsst.sim.llm.cache.ReplayMiss`.
    max_attempts
        Schema attempts per request; attempt ``i`` uses seed ``request.seed + i`` (or ``request.seed``
        again when the request's ``retry_seed`` is ``same``). A request protocol's setting, not the
        configuration's.
    max_retries
        Transport retries per attempt on timeouts, 429 and 5xx / connection errors.
    budget
        Spending cap of a run; once reached, no new request starts and :class:`BudgetExceeded` is raised.
    backoff_base_s
        Exponential backoff ``backoff_base_s * 2**(try - 1)``, or a longer Retry-After.
    sleep
        The coroutine every wait between transport tries awaits (default ``asyncio.sleep``; tests pass a
        recorder). A request's ``transport_retries`` picks the rule: ``gateway`` (``max_retries``,
        backoff, timeouts / 429 / 5xx only) or ``reference`` (:data:`REFERENCE_TRIES` tries, a wait of
        :data:`REFERENCE_WAIT_STEP_S` times the try number after every failed try, every error).

    Examples
    --------
    >>> gateway = Gateway()
    >>> request = LLMRequest(model_name="scripted/echo", messages=({"role": "user", "content": "hi"},), seed=7)
    >>> result = gateway.run([request])[0]
    >>> result.text, result.record.status, result.record.attempts, result.record.cached
    ('hi', 'ok', 1, False)
    >>> gateway.close()
    >>> with Gateway(GatewayConfig(max_concurrency=2, request_timeout_s=30)) as gateway:
    ...     gateway.max_concurrency, gateway.config.request_timeout_s
    (2, 30.0)
    """

    def __init__(self, config: GatewayConfig | None = None, cache: ResponseCache | None = None, *,
                 replay_only: bool = False, max_attempts: int = 3, max_retries: int = 4, budget: Budget | None = None,
                 backoff_base_s: float = 1.0, sleep: Callable[[float], Awaitable[Any]] | None = None):
        for field, value, low in (("max_attempts", max_attempts, 1), ("max_retries", max_retries, 0)):
            if int(value) < low:
                raise InputError("gateway", field, f"must be >= {low}, got {value}")
        if replay_only and cache is None:
            raise InputError("gateway", "replay_only", "replay-only mode needs a cache")
        self.config = config = GatewayConfig() if config is None else config
        structured_output = config.structured_output
        self.modes = StructuredModes(structured_output if isinstance(structured_output, dict) else {},
                                     default=structured_output if isinstance(structured_output, str) else None)
        self.pool = EndpointPool(list(config.endpoints), self.modes) if config.endpoints else None
        self._sender = ModeSender(self.modes, self.pool, config.api_base, float(config.request_timeout_s))
        self.cache = cache
        self.replay_only = replay_only
        self.max_concurrency = config.max_concurrency
        if self.pool is not None and self.pool.capacity() is not None:
            self.max_concurrency = min(self.max_concurrency, self.pool.capacity())  # no more than they take
        self.max_attempts = int(max_attempts)
        self.max_retries = int(max_retries)
        self.budget = budget
        self.backoff_base_s = float(backoff_base_s)
        self._sleep = sleep or asyncio.sleep
        self.records: list[CallRecord] = []
        self.provider_tries = 0  # every try that reached a provider, in this process
        self._pacer = RatePacer(config.requests_per_minute) if config.requests_per_minute else None
        self._semaphore: asyncio.Semaphore | None = None
        self._semaphore_loop: asyncio.AbstractEventLoop | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- public API ---------------------------------------------------------------------------------

    async def complete(self, request: LLMRequest) -> LLMResult:
        """Execute one request (see :meth:`complete_many`)."""
        return (await self.complete_many([request]))[0]

    async def complete_many(self, requests: Sequence[LLMRequest]) -> list[LLMResult]:
        """Execute ``requests`` concurrently; results and records come back in input order.

        Provider failures never raise: they come back as results with a failure status. Raises
        ``InputError`` for an unknown model, :class:`ReplayMiss` (before any call) in replay-only
        mode when a request is not cached, ``InputError`` (before any call) for a steered request whose
        model or vectors cannot take its steering (:func:`~pvsst.sim.llm.providers.registry.ensure_steerable`),
        and :class:`BudgetExceeded` once the budget is spent (the requests that did complete are on
        ``err.completed`` and in :attr:`records`).
        """
        requests = list(requests)
        for model in {request.model_name for request in requests}:
            ensure_runnable(model)
        for model, steering in {(r.model_name, r.steering) for r in requests if r.steering is not None}:
            ensure_steerable(model, steering)  # no call starts while one of them cannot be steered
        if self.cache is not None and hasattr(self.cache, "prefetch"):
            # A remote cache (Ray workers: pvsst.experiments.run.ray_cache) answers a batch in one round trip.
            self.cache.prefetch([request.cache_key() for request in requests])
        if self.replay_only:
            for request in requests:
                if request.cache_key() not in self.cache:
                    raise ReplayMiss(f"replay-only: no cached reply for model {request.model_name} "
                                     f"(prompt sha256 {request.prompt_sha256()[:16]}, seed {request.seed})")
        outcomes = await asyncio.gather(*(self._execute(r) for r in requests), return_exceptions=True)
        results: list[LLMResult] = []
        stopped: BudgetExceeded | None = None
        for outcome in outcomes:
            if isinstance(outcome, BudgetExceeded):
                stopped = outcome
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                results.append(outcome)
        self.records.extend(result.record for result in results)
        if stopped is not None:
            stopped.completed = results
            raise stopped
        return results

    def run(self, requests: Sequence[LLMRequest]) -> list[LLMResult]:
        """Synchronous :meth:`complete_many` on a private event loop kept for the gateway's life
        (litellm's HTTP clients outlive one call). Do not call it from inside a running loop."""
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(self.complete_many(requests))

    def drain_records(self) -> list[CallRecord]:
        """Return the provenance records collected so far and clear them."""
        drained, self.records = self.records, []
        return drained

    def close(self) -> None:
        """Close the cache and the private event loop."""
        if self.cache is not None:
            self.cache.close()
        if self._loop is not None and not self._loop.is_closed():
            # litellm leaves background tasks (its logging worker) on the loop: end them first.
            self._loop.run_until_complete(_cancel_other_tasks())
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()

    def __enter__(self) -> "Gateway":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- one request --------------------------------------------------------------------------------

    def _record(self, request: LLMRequest, **fields: Any) -> CallRecord:
        return CallRecord(call_id=call_id_for(request), trial_id=request.trial_id, round=request.round,
                          agent_id=request.agent_id, phase=request.phase, model_name=request.model_name,
                          request_seed=request.seed, prompt_sha256=request.prompt_sha256(), **fields)

    def _from_cache(self, request: LLMRequest, key: str, started: float) -> LLMResult | None:
        if self.cache is None:
            return None
        stored = self.cache.get(key)
        if stored is None:
            return None
        # Cached replies cost nothing in this run; their tokens are reported as stored.
        record = self._record(request, cached=True, attempts=0, status=STATUS_OK,
                              prompt_tokens=stored["prompt_tokens"], completion_tokens=stored["completion_tokens"],
                              cost_usd=0.0, latency_s=time.perf_counter() - started)
        return LLMResult(text=stored["text"], parsed=stored["parsed"], record=record)

    async def _execute(self, request: LLMRequest) -> LLMResult:
        started = time.perf_counter()
        key = request.cache_key()
        cached = self._from_cache(request, key, started)
        if cached is not None:
            return cached
        if self.replay_only:
            raise ReplayMiss(f"replay-only: no cached reply for model {request.model_name} "
                             f"(prompt sha256 {request.prompt_sha256()[:16]}, seed {request.seed})")
        tries = prompt_tokens = completion_tokens = 0
        cost = 0.0
        seeds: list[int | None] = []
        statuses: list[str] = []
        text: str | None = None
        parsed: Any = None
        status, error = STATUS_OK, ""
        endpoint, mode, failovers = "", "", 0
        for attempt in range(self.max_attempts):
            step = attempt if request.retry_seed == "next" else 0
            seed = None if request.seed is None else request.seed + step
            seeds.append(seed)
            try:
                reply, attempt_tries = await self._call_with_retries(request, seed, starts_request=(attempt == 0))
            except _TransportFailure as failure:
                tries += failure.tries
                status, error, mode = failure.status, failure.error, failure.mode
                statuses.append(status)
                text, parsed = None, None
                break
            tries += attempt_tries
            endpoint, mode, failovers = reply.endpoint, reply.mode, failovers + reply.failovers
            prompt_tokens += reply.prompt_tokens
            completion_tokens += reply.completion_tokens
            cost += reply.cost_usd
            if self.budget is not None:
                self.budget.charge(cost_usd=reply.cost_usd, tokens=reply.prompt_tokens + reply.completion_tokens)
            text = reply.text
            if reply.refusal:
                parsed, status, error = None, STATUS_REFUSAL, "the provider refused"
            elif request.parse == "lenient":
                parsed, status, error = parse_lenient(reply.text)
            else:
                parsed, status, error = parse_reply(reply.text, request.reply_schema())
                if reply.truncated and (status != STATUS_OK or request.schema is None):
                    # Cut at the token limit: incomplete, whether or not a prefix happens to parse.
                    parsed, status = None, STATUS_TRUNCATED
                    error = f"the reply was cut at the token limit (max_tokens={request.max_tokens})"
            statuses.append(status)
            if status == STATUS_OK:
                break
        if status == STATUS_OK and self.cache is not None:
            self.cache.put(key, {"model": request.model_name, "text": text, "parsed": parsed,
                                 "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                                 "cost_usd": cost})
        record = self._record(request, cached=False, attempts=tries, status=status, prompt_tokens=prompt_tokens,
                              completion_tokens=completion_tokens, cost_usd=cost,
                              latency_s=time.perf_counter() - started, error=redact(error), endpoint=redact(endpoint),
                              failovers=failovers, structured_output=mode)
        return LLMResult(text=text, parsed=parsed if status == STATUS_OK else None, record=record,
                         extra={"seeds": seeds, "attempt_statuses": statuses})

    # -- transport ----------------------------------------------------------------------------------

    def _limit(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._semaphore_loop is not loop:
            self._semaphore, self._semaphore_loop = asyncio.Semaphore(self.max_concurrency), loop
        return self._semaphore

    def _backoff(self, state: RetryCallState) -> float:
        delay = self.backoff_base_s * 2 ** (state.attempt_number - 1)
        error = state.outcome.exception() if state.outcome is not None else None
        asked = retry_after_s(error) if error is not None else None
        return max(delay, asked or 0.0)

    def _retrying(self, request: LLMRequest) -> AsyncRetrying:
        """The transport retries of one schema attempt, by the request's ``transport_retries``."""
        if request.transport_retries == "reference":
            return AsyncRetrying(stop=stop_after_attempt(REFERENCE_TRIES), sleep=self._sleep, reraise=True,
                                 wait=lambda state: REFERENCE_WAIT_STEP_S * state.attempt_number,
                                 retry=retry_if_exception(lambda err: not isinstance(err, _NEVER_RETRIED)))
        return AsyncRetrying(stop=stop_after_attempt(1 + self.max_retries), wait=self._backoff, sleep=self._sleep,
                             retry=retry_if_exception(is_retryable), reraise=True)

    async def _call_with_retries(self, request: LLMRequest, seed: int | None, *,
                                 starts_request: bool) -> tuple[ProviderReply, int]:
        """One schema attempt: the reply and how many transport tries it took."""
        limit = self._limit()
        sent = {"mode": "", "tries": 0}  # tries: every request sent for this attempt

        async def one_try() -> ProviderReply:
            async with limit:
                if self._pacer is not None:
                    await self._pacer.acquire()
                if starts_request and sent["tries"] == 0 and self.budget is not None:
                    # Checked once a slot is held: no new request starts once the cap is reached,
                    # while requests already in flight (their retries included) finish.
                    self.budget.check()
                before = sent["tries"]
                sent["tries"] += 1
                try:
                    # also bounds handlers that ignore litellm's
                    async with asyncio.timeout(self.config.request_timeout_s):
                        return await self._sender.send(request, seed, sent)
                finally:
                    self.provider_tries += sent["tries"] - before

        try:
            if request.model_name.startswith(SCRIPTED_PREFIX):
                # In-process scripted providers have no transport to fail; tenacity's per-call
                # set-up (~2 ms of CPU) would dominate a 100,000-agent simulation.
                reply = await one_try()
            else:
                # A mode that `auto` moves off is tried again at once, outside the transport retries:
                # at most once per mode and endpoint.
                for _ in range(len(MODES) * (len(self.pool.endpoints) if self.pool else 1)):
                    retrying = self._retrying(request)
                    try:
                        reply = await retrying(one_try)
                        break
                    except ModeRejected:
                        continue
                else:
                    reply = await one_try()
        except (InputError, BudgetExceeded):
            raise
        except Exception as err:  # every provider failure becomes a recorded status, never a crash
            if request.transport_retries == "reference":
                await self._sleep(REFERENCE_WAIT_STEP_S * REFERENCE_TRIES)  # the reference waits after its last try too
            cause = err.__cause__ if isinstance(err, ModeRejected) and err.__cause__ is not None else err
            raise _TransportFailure(transport_status(cause), sent["tries"], one_line(cause), sent["mode"]) from err
        return reply, sent["tries"]
