"""A scripted model whose vote replies take one shape per voter, for the vote-failure denominators.

Honest voter ``a0i`` answers its vote call with shape ``i`` of :data:`VOTE_SHAPES`: valid votes, an empty
list, a string, a misspelt key, text that is not JSON, and no reply at all (an exception: a transport
failure). Posts are valid JSON, except agent ``a01``'s, whose confidence is an integer too large for a
float (the reference's lenient parser records a failed generation).
"""
from __future__ import annotations

import json

from pvsst.sim.llm.types import LLMRequest, ProviderReply

POST = {"post": "Labels help.", "opinion": "support", "confidence": 0.6, "reason": "stub"}
HUGE_CONFIDENCE = '{"post": "Huge.", "opinion": "support", "confidence": 1' + "0" * 400 + ', "reason": "stub"}'
VOTE_SHAPES = (
    ("valid", json.dumps({"votes": [1, 0, -1, 1, 0]})),
    ("empty list", json.dumps({"votes": []})),
    ("a string", json.dumps({"votes": "1, 0, -1"})),
    ("misspelt key", json.dumps({"vote": [1, 1, 1, 1, 1]})),
    ("not JSON", "I would rather not vote."),
    ("no reply", None),
)


class VoteShapesProvider:
    """Replies by phase and agent: see the module docstring."""

    name = "vote_shapes"

    def reply(self, request: LLMRequest) -> ProviderReply:
        ordinal = int(request.agent_id[1:])
        if request.phase != "vote":
            return ProviderReply(HUGE_CONFIDENCE if request.agent_id == "a01" else json.dumps(POST))
        text = VOTE_SHAPES[ordinal][1]
        if text is None:
            raise ConnectionError("the stub sends no reply")
        return ProviderReply(text)
