"""Scripted thread participants and a scripted attribute judge: pure functions of the request.

They read the field lines of pvsst's own thread and attribute-judge templates (``sim/materials/pvsst``):

- ``scripted/thread_commenter``: writes stance-bearing comments from the topic lexicon
  (:mod:`pvsst.sim.llm.providers.imitate`): as many words as a draw in the asked range (``in N to M
  words``), on the side of the message it answers, or the other side when the critic note (``ATTITUDE:``)
  is in the prompt, a random side when the answered message has none; with probability 1/2 it copies up
  to two content words of that message. It never mentions its persona's attributes. A opening post is 12
  words; a vote request gets random valid votes.
- ``scripted/thread_discloser``: the same comments, each followed by one sentence per attribute of its
  ``YOUR PROFILE:`` block (:data:`DISCLOSURES`): ``I am 41 years old.``, ``I live in Ohio.``, ...
- ``scripted/attribute_reader``: an attribute judge. For each attribute its reply schema asks about, it
  looks for the discloser's sentence in the request; found, it guesses the stated value with certainty 5;
  not found, it guesses three distinct values uniformly at random (ages uniform on
  :data:`pvsst.personas.inferable.AGE_RANGE`) with certainty 1, i.e. exactly the random baseline.

Together they are the planted controls of attribute inference: a discloser's attributes are read back,
a commenter's are guessed at chance.

Examples
--------
>>> from pvsst.sim.llm.types import LLMRequest
>>> ask = LLMRequest(model_name="scripted/thread_discloser", seed=1, messages=({"role": "user", "content":
...     "TOPIC: Should AI-generated content be labeled on social platforms?\\nYOUR PROFILE:\\n- age: 41\\n"
...     "- location: Ohio\\nTHREAD (...):\\n@p1: \\"labels build trust\\"\\nTASK: ... in 2 to 2 words."},))
>>> ThreadDiscloser().reply(ask).text.split(". ", 1)[1]
'I am 41 years old. I live in Ohio.'
"""
from __future__ import annotations

import json
import re

import numpy as np

from pvsst.personas.inferable import AGE_RANGE
from pvsst.sim.llm.providers.imitate import content_words, lexicon_for
from pvsst.sim.llm.providers.scripted import prompt_word_count, request_rng, schema_instance, word_count
from pvsst.sim.llm.types import LLMRequest, ProviderReply

DISCLOSURES = {"age": "I am {} years old.", "sex": "I am {}.", "location": "I live in {}.",
               "education": "My education: {}.", "income": "My income: {}.",
               "relationship_status": "My relationship status: {}."}
"""The sentence ``scripted/thread_discloser`` writes for each attribute, and ``scripted/attribute_reader`` reads."""

_TOPIC = re.compile(r"^TOPIC: (.*)$", re.MULTILINE)
_WORDS = re.compile(r"in (\d+) to (\d+) words")
_PATH_ITEM = re.compile(r'^\s*@\S+?(?: \(you\))?: "(.*)"$')
_PROFILE_LINE = re.compile(r"^- ([a-z ]+): (.+)$")
POST_WORDS = 12


def _user_prompt(request: LLMRequest) -> str:
    return "\n".join(str(m.get("content", "")) for m in request.messages if m.get("role") == "user")


def _reply(request: LLMRequest, text: str) -> ProviderReply:
    return ProviderReply(text=text, prompt_tokens=prompt_word_count(request), completion_tokens=word_count(text))


class ThreadCommenter:
    """``scripted/thread_commenter`` (see the module docstring)."""

    name = "thread_commenter"
    copy_probability = 0.5

    def reply(self, request: LLMRequest) -> ProviderReply:
        prompt = _user_prompt(request)
        rng = request_rng(request)
        if request.schema is not None:
            return _reply(request, json.dumps(schema_instance(request.schema, rng, ["ok"])))
        return _reply(request, self.comment(prompt, rng))

    def comment(self, prompt: str, rng: np.random.Generator) -> str:
        lexicon = lexicon_for(m.group(1).strip() if (m := _TOPIC.search(prompt)) else "")
        lines = [m.group(1) for line in prompt.splitlines() if (m := _PATH_ITEM.match(line))]
        answered = lines[-1] if lines else ""
        low, high = (int(m.group(1)), int(m.group(2))) if (m := _WORDS.search(prompt)) else (POST_WORDS, POST_WORDS)
        n_words = int(rng.integers(low, high + 1))
        side = lexicon.infer_side(answered) or int(rng.choice([-1, 1]))
        if "\nATTITUDE:" in prompt:
            side = -side
        words = [str(w) for w in rng.choice(lexicon.side_words(side), size=n_words, replace=True)]
        copied = content_words(answered)
        if copied and rng.random() < self.copy_probability:
            picks = rng.choice(len(copied), size=min(2, len(copied)), replace=False)
            words[:len(picks)] = [copied[int(i)] for i in picks]
        return " ".join(words[:n_words]).capitalize() + "."


class ThreadDiscloser(ThreadCommenter):
    """``scripted/thread_discloser``: a commenter that states every attribute of its profile block."""

    name = "thread_discloser"

    def comment(self, prompt: str, rng: np.random.Generator) -> str:
        profile = {m.group(1).replace(" ", "_"): m.group(2).strip()
                   for line in prompt.split("YOUR PROFILE:\n", 1)[-1].splitlines() if (m := _PROFILE_LINE.match(line))}
        stated = [DISCLOSURES[name].format(value) for name, value in profile.items() if name in DISCLOSURES]
        return " ".join([super().comment(prompt, rng), *stated])


class AttributeReader:
    """``scripted/attribute_reader``: reads the discloser's sentences, else guesses at random."""

    name = "attribute_reader"

    def reply(self, request: LLMRequest) -> ProviderReply:
        prompt = _user_prompt(request)
        rng = request_rng(request)
        asked = (request.schema or {}).get("properties", {})
        payload = {name: self.guess(name, spec, prompt, rng) for name, spec in asked.items()}
        return _reply(request, json.dumps(payload))

    def guess(self, name: str, spec: dict, prompt: str, rng: np.random.Generator) -> dict:
        items = spec.get("properties", {}).get("guesses", {}).get("items", {})
        options = [str(o) for o in items.get("enum", [])]
        sentence = DISCLOSURES.get(name, "{}")
        value = r"(\d+)" if not options else "(" + "|".join(re.escape(o) for o in options) + ")"
        pattern = re.escape(sentence).replace(re.escape("{}"), value)
        if (found := re.search(pattern, prompt)) is not None:
            stated = found.group(1)
            return {"guesses": [int(stated) if not options else stated], "certainty": 5}
        if options:
            picks = rng.choice(len(options), size=min(3, len(options)), replace=False)
            return {"guesses": [options[int(i)] for i in picks], "certainty": 1}
        ages = rng.choice(np.arange(AGE_RANGE[0], AGE_RANGE[1] + 1), size=3, replace=False)
        return {"guesses": [int(a) for a in ages], "certainty": 1}
