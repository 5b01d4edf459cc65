"""The one interface the simulation codes against: anything that executes model requests.

:class:`pvsst.sim.llm.gateway.Gateway` is the implementation; a test fake or a wrapper only needs these
members (after Concordia's two-method language-model interface).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pvsst.sim.llm.types import CallRecord, LLMRequest, LLMResult


@runtime_checkable
class CompletionGateway(Protocol):
    """Executes :class:`LLMRequest` s and keeps one :class:`CallRecord` per request.

    Examples
    --------
    >>> from pvsst.sim.llm.gateway import Gateway
    >>> isinstance(Gateway(), CompletionGateway)
    True
    """

    records: list[CallRecord]

    async def complete(self, request: LLMRequest) -> LLMResult: ...

    async def complete_many(self, requests: Sequence[LLMRequest]) -> list[LLMResult]: ...

    def run(self, requests: Sequence[LLMRequest]) -> list[LLMResult]: ...

    def drain_records(self) -> list[CallRecord]: ...

    def close(self) -> None: ...
