"""Many model servers behind one model name: litellm's ``Router`` balances, cools down and fails over.

An :class:`EndpointPool` holds the endpoints of a run (``execution.endpoints``) and one
``litellm.Router`` per model, whose deployments are those endpoints (``weight`` for its weighted
shuffle, ``max_parallel_requests`` for the per-endpoint concurrency). A failing endpoint is cooled
down at once and the Router retries the request on the others (``num_retries``); a request the
server rejected (a client error) is not retried on any endpoint (``RetryPolicy``: it would fail the
same way everywhere). The request's seed travels with it, so a
deterministic server gives the same reply wherever it ran.

A deployment hook (litellm's ``async_pre_call_deployment_hook``, registered once per process) sets the
``response_format`` after the Router has chosen the endpoint, from the structured-output mode learned
for that (model, endpoint); the failure hook tells ``auto`` which endpoint rejected which mode.
"""
from __future__ import annotations

import asyncio
import itertools
import os
import weakref
from dataclasses import dataclass
from typing import Any

from pvsst.sim.llm.config import Endpoint
from pvsst.sim.llm.providers.registry import import_litellm
from pvsst.sim.llm.structured_modes import StructuredModes, response_format_for
from pvsst.sim.llm.transport_errors import is_request_rejected

COOLDOWN_S = 30.0
"""How long a failed endpoint gets no requests (litellm's cooldown), before it is tried again."""

SLOT_WAIT_S = 0.02
"""How long a request waits before asking the Router again when every endpoint's slots are in use."""

_POOLS: "weakref.WeakValueDictionary[str, EndpointPool]" = weakref.WeakValueDictionary()
_POOL_IDS = itertools.count()
_METADATA_KEY = "pvsst_pool"


def placeholder_api_key(model: str) -> str | None:
    """An API key for an ``openai/`` model on a self-hosted server when none is set: local servers
    (vLLM, llama.cpp, Ollama) ignore it, but the OpenAI client refuses to send a request without one.

    Examples
    --------
    >>> import os
    >>> placeholder_api_key("ollama/llama3") is None
    True
    >>> placeholder_api_key("openai/m") == (None if os.environ.get("OPENAI_API_KEY") else "none")
    True
    """
    if model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
        return "none"
    return None


@dataclass(frozen=True)
class RoutedCall:
    """What the pool reports besides the response: the endpoint that served and how often the
    Router failed over to another endpoint first."""

    endpoint: str
    failovers: int
    mode: str


class EndpointPool:
    """The endpoints of a run and one litellm ``Router`` per model over them.

    Examples
    --------
    >>> pool = EndpointPool([Endpoint(api_base="http://127.0.0.1:9/v1", weight=2),
    ...                      Endpoint(api_base="http://127.0.0.1:10/v1")])
    >>> [d["litellm_params"]["weight"] for d in pool.model_list("openai/m")]
    [2.0, 1.0]
    >>> pool.endpoint_of("ep1")
    'http://127.0.0.1:10/v1'
    """

    def __init__(self, endpoints: list[Endpoint], modes: StructuredModes | None = None):
        if not endpoints:
            raise ValueError("an endpoint pool needs at least one endpoint")
        self.endpoints = list(endpoints)
        self.modes = modes or StructuredModes()
        self._routers: dict[str, Any] = {}
        self.token = f"pool{next(_POOL_IDS)}"
        _POOLS[self.token] = self

    def capacity(self) -> int | None:
        """Requests the endpoints take at once together (None: some endpoint sets no limit)."""
        limits = [endpoint.max_concurrency for endpoint in self.endpoints]
        return None if any(limit is None for limit in limits) else sum(limits)

    def endpoint_of(self, deployment_id: str | None) -> str:
        if deployment_id and deployment_id.startswith("ep") and deployment_id[2:].isdigit():
            index = int(deployment_id[2:])
            if index < len(self.endpoints):
                return self.endpoints[index].api_base
        return ""

    def model_list(self, model: str) -> list[dict[str, Any]]:
        """litellm ``Router`` deployments of ``model``: one per endpoint, ids ``ep0``, ``ep1``, ..."""
        deployments = []
        for index, endpoint in enumerate(self.endpoints):
            params: dict[str, Any] = {"model": model, "api_base": endpoint.api_base, "weight": float(endpoint.weight)}
            key = placeholder_api_key(model)
            if key is not None:
                params["api_key"] = key
            if endpoint.max_concurrency is not None:
                params["max_parallel_requests"] = int(endpoint.max_concurrency)
            deployments.append({"model_name": model, "litellm_params": params, "model_info": {"id": f"ep{index}"}})
        return deployments

    def router(self, model: str) -> Any:
        if model not in self._routers:
            _install_hook()
            # A failure cools the endpoint down at once and the Router moves the request to another
            # endpoint; the gateway retries the whole with backoff. Twice the endpoints: a retry may
            # also meet an endpoint whose max_parallel_requests are all in use (a 429 of the Router's).
            retries = 2 * len(self.endpoints) - 1
            self._routers[model] = import_litellm().Router(model_list=self.model_list(model), num_retries=retries,
                                          retry_policy=no_retry_of_rejected_requests(retries),
                                          allowed_fails=0, cooldown_time=COOLDOWN_S)
        return self._routers[model]

    async def acompletion(self, schema: dict[str, Any] | None, **kwargs: Any) -> tuple[Any, RoutedCall]:
        """``Router.acompletion`` for ``kwargs["model"]``; the response and where it was served."""
        model = kwargs["model"]
        kwargs.pop("api_base", None)
        metadata = {_METADATA_KEY: self.token, "pvsst_schema": schema, "pvsst_model": model}
        router = self.router(model)
        while True:
            try:
                response = await router.acompletion(metadata=metadata, **kwargs)
                break
            except Exception as err:
                if not _slots_full(err):
                    raise
                # Every endpoint the Router tried had all its max_parallel_requests slots in use (the
                # Router refuses instead of waiting): wait for a slot, within the gateway's timeout.
                await asyncio.sleep(SLOT_WAIT_S)
        hidden = getattr(response, "_hidden_params", None) or {}
        headers = hidden.get("additional_headers") or {}
        endpoint = self.endpoint_of(hidden.get("model_id")) or str(hidden.get("api_base") or "")
        failovers = int(headers.get("x-litellm-attempted-retries") or 0)
        return response, RoutedCall(endpoint, failovers, self.modes.mode_for(model, endpoint))

    def before_send(self, kwargs: dict[str, Any]) -> None:
        """Set the ``response_format`` for the endpoint the Router chose (deployment hook)."""
        metadata = kwargs.get("metadata") or {}
        if metadata.get("pvsst_schema") is None:
            return  # no schema: whatever response_format the request carries stays
        endpoint = self.endpoint_of((kwargs.get("model_info") or {}).get("id"))
        mode = self.modes.mode_for(metadata.get("pvsst_model", ""), endpoint)
        response_format = response_format_for(metadata.get("pvsst_schema"), mode)
        if response_format is None:
            kwargs.pop("response_format", None)
        else:
            kwargs["response_format"] = response_format

    def after_failure(self, kwargs: dict[str, Any], err: BaseException) -> None:
        """An endpoint rejected the request: under ``auto``, its mode moves on (deployment hook)."""
        metadata = kwargs.get("metadata") or {}
        if metadata.get("pvsst_schema") is None or not is_request_rejected(err):
            return
        endpoint = self.endpoint_of((kwargs.get("model_info") or {}).get("id"))
        model = metadata.get("pvsst_model", "")
        sent = kwargs.get("response_format")
        self.modes.reject(model, endpoint, _mode_of(sent))


def no_retry_of_rejected_requests(retries: int) -> Any:
    """litellm's ``RetryPolicy``: ``retries`` for errors another endpoint may not have (timeouts, rate
    limits, server errors), none for a request the server rejected (400, 401, 404, content policy).

    Examples
    --------
    >>> policy = no_retry_of_rejected_requests(2)
    >>> policy.BadRequestErrorRetries, policy.InternalServerErrorRetries
    (0, 2)
    """
    return import_litellm().types.router.RetryPolicy(BadRequestErrorRetries=0, AuthenticationErrorRetries=0,
                                                     NotFoundErrorRetries=0,
                       ContentPolicyViolationErrorRetries=0, TimeoutErrorRetries=retries, RateLimitErrorRetries=retries,
                       InternalServerErrorRetries=retries, ServiceUnavailableErrorRetries=retries,
                       DefaultRetries=retries)


def _slots_full(err: BaseException) -> bool:
    """litellm's refusal of a deployment whose ``max_parallel_requests`` are all in flight (a 429)."""
    return getattr(err, "status_code", None) == 429 and "max_parallel_requests slots in use" in str(err)


def _mode_of(response_format: Any) -> str:
    if not response_format:
        return "none"
    if response_format.get("type") == "json_schema":
        return "json_schema"
    return "json_object" if "schema" in response_format else "json_mode"


def _pool_of(kwargs: dict[str, Any]) -> EndpointPool | None:
    token = (kwargs.get("metadata") or {}).get(_METADATA_KEY)
    return _POOLS.get(token) if token else None


_HOOK: Any = None


def _install_hook() -> None:
    """Register the deployment hook with litellm once per process; it acts only on pvsst's requests."""
    global _HOOK
    litellm = import_litellm()
    if _HOOK is not None and _HOOK in litellm.callbacks:
        return

    class _DeploymentHook(litellm.integrations.custom_logger.CustomLogger):
        async def async_pre_call_deployment_hook(self, kwargs, call_type):  # noqa: ANN001 - litellm's signature
            pool = _pool_of(kwargs)
            if pool is not None:
                pool.before_send(kwargs)
            return kwargs

        async def async_post_call_failure_deployment_hook(self, request_data, original_exception,
                                                          call_type):  # noqa: ANN001
            pool = _pool_of(request_data)
            if pool is not None:
                pool.after_failure(request_data, original_exception)

    _HOOK = _DeploymentHook()
    litellm.callbacks.append(_HOOK)
