"""A scripted respondent whose option log-probabilities are a fixed function of the prompt text.

Every option's log-probability is read off the SHA-256 of the prompt's text and the option code, so two
requests with the same messages get the same distribution, whatever their seed, and different prompts
(other cards, other questions) get different ones. It counts the requests it answers, per process."""
from __future__ import annotations

import hashlib

from pvsst.sim.llm.option_probabilities import distribution_reply, from_logprobs
from pvsst.sim.llm.types import LLMRequest, ProviderReply


def prompt_logprobs(prompt: str, codes) -> dict[str, float]:
    """log p(code | prompt) up to a constant: -(first two digest bytes) / 8192, in (-8, 0]."""
    out = {}
    for code in codes:
        digest = hashlib.sha256(f"{prompt}\x1f{code}".encode("utf-8")).digest()
        out[code] = -int.from_bytes(digest[:2], "big") / 8192
    return out


class PromptLogprobsProvider:
    """Answers an option-scoring request with the softmax of :func:`prompt_logprobs`."""

    name = "prompt_logprobs"
    returns_distributions = True
    calls = 0

    def reply(self, request: LLMRequest) -> ProviderReply:
        type(self).calls += 1
        prompt = "\n".join(str(m.get("content", "")) for m in request.messages)
        codes = list(request.option_scoring or ())
        if not codes:
            raise ValueError("prompt_logprobs answers option-scoring (logprobs) requests only")
        return ProviderReply(text=distribution_reply(from_logprobs(prompt_logprobs(prompt, codes))),
                             prompt_tokens=len(prompt.split()), completion_tokens=len(codes))
