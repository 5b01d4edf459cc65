"""One try at a provider in the structured-output mode of the moment, and ``auto``'s probing.

Under ``auto`` one request at a time finds the mode a server takes, so a rejected mode is sent once,
not once per request in flight. With many endpoints the first request goes to each endpoint directly
(not through the Router, which would cool an endpoint down for rejecting a mode); its first reply is
the request's, the others only teach the modes. Afterwards the Router's deployment hook sends each
endpoint its own mode (:mod:`pvsst.sim.llm.endpoints`).
"""
from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from pvsst.sim.llm.dispatch import call_provider
from pvsst.sim.llm.endpoints import EndpointPool
from pvsst.sim.llm.structured_modes import StructuredModes
from pvsst.sim.llm.transport_errors import is_request_rejected, one_line
from pvsst.sim.llm.types import LLMRequest, ProviderReply


class ModeRejected(Exception):
    """The server rejected the structured-output mode and ``auto`` moved on: try again at once."""


class ModeSender:
    """Sends tries for a gateway: ``sent`` (a dict per schema attempt) gets ``mode`` (the last mode sent)
    and ``tries`` (incremented for every extra request a probe sends).

    Examples
    --------
    >>> sender = ModeSender(StructuredModes(), pool=None, api_base=None, timeout_s=5)
    >>> request = LLMRequest(model_name="scripted/echo", messages=({"role": "user", "content": "hi"},))
    >>> sent = {"mode": "", "tries": 1}
    >>> asyncio.run(sender.send(request, 1, sent)).text, sent
    ('hi', {'mode': '', 'tries': 1})
    """

    def __init__(self, modes: StructuredModes, pool: EndpointPool | None, api_base: str | None, timeout_s: float):
        self.modes, self.pool, self.api_base, self.timeout_s = modes, pool, api_base, timeout_s
        self._probes: dict[tuple[int, str], asyncio.Lock] = {}

    def _probe(self, model: str) -> asyncio.Lock | None:
        endpoint = "*" if self.pool is not None else self.api_base
        if self.modes.settled(model, endpoint):
            return None
        return self._probes.setdefault((id(asyncio.get_running_loop()), model), asyncio.Lock())

    async def _probe_endpoints(self, request: LLMRequest, seed: int | None, sent: dict[str,
                                                                                       Any]) -> ProviderReply | None:
        first: ProviderReply | None = None
        sent["tries"] -= 1  # the try that got here is the first request sent below
        for endpoint in self.pool.endpoints:
            while True:
                mode = sent["mode"] = self.modes.mode_for(request.model_name, endpoint.api_base)
                sent["tries"] += 1
                try:
                    reply = await call_provider(request, seed, timeout_s=self.timeout_s, api_base=endpoint.api_base,
                                                mode=mode)
                except Exception as err:  # noqa: BLE001 - a dead endpoint is the Router's to cool down
                    if is_request_rejected(err) and self.modes.reject(request.model_name, endpoint.api_base, mode):
                        continue
                    break
                self.modes.confirm(request.model_name, endpoint.api_base)
                first = first or reply
                break
        self.modes.confirm(request.model_name, "*")
        return first

    async def send(self, request: LLMRequest, seed: int | None, sent: dict[str, Any]) -> ProviderReply:
        """One try; raises the provider's error, or :class:`ModeRejected` when ``auto`` moved off the
        mode this try was rejected in."""
        probe = self._probe(request.model_name) if request.schema is not None else None
        async with probe or contextlib.nullcontext():
            if probe is not None and self.pool is not None and not self.modes.settled(request.model_name, "*"):
                reply = await self._probe_endpoints(request, seed, sent)
                if reply is not None:
                    return reply
            mode = self.modes.mode_for(request.model_name, self.api_base)
            sent["mode"] = mode if request.schema is not None else ""
            version = self.modes.version
            try:
                reply = await call_provider(request, seed, timeout_s=self.timeout_s, api_base=self.api_base,
                                            mode=mode, pool=self.pool)
            except Exception as err:
                if request.schema is not None and is_request_rejected(err) and (
                        self.modes.version != version if self.pool is not None  # moved by the Router's hook
                        else self.modes.reject(request.model_name, self.api_base, mode)):
                    raise ModeRejected(one_line(err)) from err
                raise
            if probe is not None:
                self.modes.confirm(request.model_name, self.api_base)
            return reply
