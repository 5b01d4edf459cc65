"""A scripted survey respondent that always answers the first option listed (a maximal primacy effect).

Its answers make the display order of the options visible, and a one-answer model has no variance
between groups (eta squared 0)."""
from __future__ import annotations

import json
import re

from pvsst.sim.llm.types import LLMRequest, ProviderReply

OPTION_LINE = re.compile(r"^- (\w+): ", re.MULTILINE)


class FirstListedProvider:
    """Answers with the first option listed in the question."""

    name = "first_listed"

    def reply(self, request: LLMRequest) -> ProviderReply:
        first = OPTION_LINE.search(request.messages[-1]["content"]).group(1)
        return ProviderReply(json.dumps({"answer": first}))
