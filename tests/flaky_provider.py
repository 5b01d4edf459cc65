"""``scripted/flaky``: the scripted imitation model, or a model server that is down while ``failing`` is set.

While :attr:`FlakyProvider.failing` is true every call raises (no reply: a transport failure), so each trial
finishes with all its calls failed and is degraded; cleared, it answers as ``scripted/imitate`` does.
"""
from __future__ import annotations

from pvsst.sim.llm.providers.imitate import ImitateProvider
from pvsst.sim.llm.types import LLMRequest, ProviderReply


class FlakyProvider(ImitateProvider):
    name = "flaky"
    failing = False

    def reply(self, request: LLMRequest) -> ProviderReply:
        if FlakyProvider.failing:
            raise ConnectionError("the model server is down")
        return super().reply(request)
