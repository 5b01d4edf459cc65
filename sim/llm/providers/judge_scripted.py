"""``scripted/lexicon_judge``: a stance-judge provider that reads the post with the lexicon judge.

It answers a judge request (:mod:`pvsst.sim.judges.llm_judge`, reply ``{"stance": label}``) with the
label :func:`pvsst.sim.judges.lexicon.lexicon_score` gives the request's ``POST:`` line on the topic of its
``TOPIC:`` line (pvsst's judge template writes both), so the language-model judge path (gateway, cache,
provenance) can be run and checked without a model: it must agree with the ``lexicon`` judge exactly.
Any other request gets a schema instance, as the other scripted providers give.

Examples
--------
>>> from pvsst.sim.llm.types import LLMRequest
>>> ask = LLMRequest(model_name="scripted/lexicon_judge", schema={"type": "object"}, messages=(
...     {"role": "user", "content": "TOPIC: Should AI-generated content be labeled on social platforms?\\n"
...                                 "POST: stigma hurts artists"},))
>>> LexiconJudgeProvider().reply(ask).text
'{"stance": "lean oppose"}'
"""
from __future__ import annotations

import json
import re

from pvsst.sim.judges.lexicon import lexicon_score
from pvsst.sim.llm.providers.scripted import prompt_word_count, request_rng, schema_instance, word_count
from pvsst.sim.llm.types import LLMRequest, ProviderReply
from pvsst.sim.stance import STANCE_LABELS
from pvsst.sim.topics import Topic

_FIELD = re.compile(r"^(TOPIC|POST): (.*)$")


class LexiconJudgeProvider:
    """Judges the ``POST:`` line of a request with the topic lexicon (see the module docstring)."""

    name = "lexicon_judge"

    def reply(self, request: LLMRequest) -> ProviderReply:
        prompt = "\n".join(str(m.get("content", "")) for m in request.messages if m.get("role") == "user")
        fields = {m.group(1): m.group(2).strip() for line in prompt.splitlines() if (m := _FIELD.match(line))}
        if "POST" in fields:
            topic = Topic("", fields.get("TOPIC", ""), "", "")
            payload = {"stance": STANCE_LABELS[self.score(fields["POST"], topic)]}
        else:
            payload = schema_instance(request.schema or {"type": "object"}, request_rng(request), prompt.split())
        text = json.dumps(payload)
        return ProviderReply(text=text, prompt_tokens=prompt_word_count(request), completion_tokens=word_count(text))

    def score(self, post: str, topic) -> int:
        """The judged stance of ``post`` (-3..3); subclasses change it to make judges that disagree."""
        return lexicon_score(post, topic)
