"""Which provider errors are worth retrying, what status an exhausted retry leaves, and Retry-After.

Classification goes by exception class names in the MRO and by HTTP status code, so it needs no
import of litellm / openai and applies equally to in-process scripted providers.
"""
from __future__ import annotations

import asyncio
import email.utils
import re
import time
from typing import Any

from pvsst.core.redaction import redact
from pvsst.sim.llm.types import STATUS_ERROR, STATUS_RATE_LIMIT, STATUS_SERVER_ERROR, STATUS_TIMEOUT

_TIMEOUT_CLASSES = {"Timeout", "APITimeoutError", "TimeoutError", "ReadTimeout", "ConnectTimeout"}
_RATE_LIMIT_CLASSES = {"RateLimitError"}
_SERVER_CLASSES = {"InternalServerError", "ServiceUnavailableError", "BadGatewayError",
                   "APIConnectionError", "ConnectError", "RemoteProtocolError",
                   "APIResponseValidationError"}
# A request the server's own validation rejected but reported as a 5xx: llama-cpp-python's server
# answers 500 with pydantic's "1 validation error: ... 'loc': ('body', 'response_format', ...)".
_REQUEST_VALIDATION = re.compile(r"validation errors?\b.*\(\s*'body'", re.DOTALL)
# Retry-After values above this are treated as this (a provider asking for an hour stalls a run).
MAX_RETRY_AFTER_S = 120.0


def transport_status(err: BaseException) -> str:
    """The terminal status of a call that failed with ``err``: timeout / rate_limited / server_error
    (all retryable) or error (not retryable: auth, bad request, unknown model, ...).

    Examples
    --------
    >>> transport_status(asyncio.TimeoutError())
    'timeout'
    >>> transport_status(ValueError("bad"))
    'error'
    """
    names = {cls.__name__ for cls in type(err).__mro__}
    status_code = getattr(err, "status_code", None)
    if is_request_rejected(err):
        return STATUS_ERROR
    if names & _TIMEOUT_CLASSES or isinstance(err, asyncio.TimeoutError) or status_code in (408,):
        return STATUS_TIMEOUT
    if names & _RATE_LIMIT_CLASSES or status_code == 429:
        return STATUS_RATE_LIMIT
    if names & _SERVER_CLASSES:
        return STATUS_SERVER_ERROR
    if isinstance(status_code, int) and status_code >= 500:
        return STATUS_SERVER_ERROR
    return STATUS_ERROR


def is_retryable(err: BaseException) -> bool:
    return transport_status(err) != STATUS_ERROR


def is_request_rejected(err: BaseException) -> bool:
    """The server rejected the request itself (a client error): HTTP 4xx other than 408 and 429, or a
    5xx whose message is the server's validation of the request body (llama-cpp-python's server).
    Such a request fails the same way on every try, so it is never retried.

    Examples
    --------
    >>> class BadRequest(Exception):
    ...     status_code = 400
    >>> class Internal(Exception):
    ...     status_code = 500
    >>> is_request_rejected(BadRequest()), is_request_rejected(Internal("boom"))
    (True, False)
    >>> is_request_rejected(Internal("1 validation error: {'loc': ('body', 'response_format', 'type')}"))
    True
    """
    status_code = getattr(err, "status_code", None)
    if isinstance(status_code, int) and 400 <= status_code < 500:
        return status_code not in (408, 429)
    if isinstance(status_code, int) and status_code >= 500:
        return bool(_REQUEST_VALIDATION.search(str(err)))
    return False


def _header_sources(err: BaseException) -> list[Any]:
    sources = [getattr(err, "headers", None), getattr(err, "litellm_response_headers", None)]
    response = getattr(err, "response", None)
    sources.append(getattr(response, "headers", None))
    return [s for s in sources if s]


def retry_after_s(err: BaseException) -> float | None:
    """Seconds the provider asked us to wait (``retry-after-ms`` or ``retry-after``), capped, or None.

    Examples
    --------
    >>> class Limited(Exception):
    ...     status_code = 429
    ...     headers = {"Retry-After": "2"}
    >>> retry_after_s(Limited())
    2.0
    """
    for headers in _header_sources(err):
        lowered = {str(k).lower(): str(v) for k, v in dict(headers).items()}
        if "retry-after-ms" in lowered:
            try:
                return min(MAX_RETRY_AFTER_S, max(0.0, float(lowered["retry-after-ms"]) / 1000.0))
            except ValueError:
                pass
        value = lowered.get("retry-after")
        if value is None:
            continue
        try:
            return min(MAX_RETRY_AFTER_S, max(0.0, float(value)))
        except ValueError:
            parsed = email.utils.parsedate_to_datetime(value) if value else None
            if parsed is not None:
                return min(MAX_RETRY_AFTER_S, max(0.0, parsed.timestamp() - time.time()))
    return None


def one_line(err: BaseException, limit: int = 300) -> str:
    """``ClassName: message`` on one line, secrets redacted (:func:`pvsst.core.redaction.redact`), shortened:
    what provenance records as ``error``."""
    text = redact(" ".join(str(err).split()))
    return f"{type(err).__name__}: {text}"[:limit]
