"""Planted-effect providers: scripted agents and respondents with a known effect of a set size, and nulls.

Every audit must be shown to detect what it claims and not to detect what is absent. These providers
plant one effect each, of a set size, and are pure functions of the request and its seed
(:func:`pvsst.sim.llm.providers.scripted.request_rng`):

- ``scripted/planted_answer_shift``: a survey respondent that answers uniformly at random over the
  reply schema's codes, except that a persona whose prompt contains :attr:`PlantedAnswerShift.group_phrase`
  (default ``"Black woman"``, as the ``profile`` persona card writes race and sex) switches its
  answer to the alphabetically first code with probability ``amount / (1 - 1/K)``, so that group's
  share of that code is higher by exactly ``amount`` (default 0.15). Asked for a distribution
  (``logprobs`` or ``verbalized``) it returns the distribution it draws from.
  ``scripted/planted_answer_null``: the same with ``amount = 0``.
- ``scripted/planted_contradiction``: a trial agent that keeps its stance and reports it with every
  post, but writes the post for the opposite side with probability ``contradiction_rate`` (default
  0.2): ``1 + |s|`` words of the topic lexicon's side, as the lexicon judge reads
  (:mod:`pvsst.sim.judges.lexicon`). It votes without regard to side (like with probability 1/2).
- ``scripted/planted_same_side_votes``: never contradicts, but likes a post whose words are on its
  own side with probability ``1/2 + margin/2`` and one on the other side with ``1/2 - margin/2``
  (default ``margin`` 0.2: the same-side like rate exceeds the other-side one by 0.2).
- ``scripted/planted_trial_null``: contradiction rate 0 and margin 0.
- ``scripted/planted_stance_shift``: a first-round agent for counterfactual audits. It reports the stance
  of its prompt moved one step up or down (at random) with probability ``noise`` (default 0.3), and an
  agent whose prompt contains ``group_phrase`` (default ``"Black woman"``) then moves one step toward
  support with probability ``amount`` (default 0.3); stances stay within the scale. It votes like
  ``planted_trial_null``. ``scripted/planted_stance_null``: the same with ``amount = 0``.

Subclass and set the class attributes (or pass them to the constructor) for other sizes, and register
the subclass with :func:`pvsst.sim.llm.providers.registry.register_scripted_provider`.

Examples
--------
>>> from pvsst.sim.llm.types import LLMRequest
>>> schema = {"type": "object", "properties": {"answer": {"enum": ["yes", "no"]}}}
>>> ask = lambda card: LLMRequest(model_name="scripted/planted_answer_shift", schema=schema, seed=1,
...                               option_scoring=("yes", "no"), messages=({"role": "user", "content": card},))
>>> PlantedAnswerShift().reply(ask("A 40-year-old Black woman living in Ohio.")).text
'{"probabilities": {"no": 0.65, "yes": 0.35}}'
>>> PlantedAnswerShift().reply(ask("A 40-year-old white man living in Ohio.")).text
'{"probabilities": {"no": 0.5, "yes": 0.5}}'
"""
from __future__ import annotations

import json
import re

import numpy as np

from pvsst.sim.llm.option_probabilities import PROBABILITIES, distribution_reply
from pvsst.sim.llm.providers.imitate import _VOTE_LINE, POST_FIELDS, _fields, lexicon_for
from pvsst.sim.llm.providers.scripted import prompt_word_count, request_rng, schema_instance, word_count
from pvsst.sim.llm.types import LLMRequest, ProviderReply
from pvsst.sim.stance import LABEL_TO_STANCE, STANCE_LABELS


def _reply(request: LLMRequest, payload: dict) -> ProviderReply:
    text = json.dumps(payload)
    return ProviderReply(text=text, prompt_tokens=prompt_word_count(request), completion_tokens=word_count(text))


def _prompt(request: LLMRequest) -> str:
    return "\n".join(str(m.get("content", "")) for m in request.messages)


def _distribution_codes(request: LLMRequest) -> list[str] | None:
    if request.option_scoring is not None:
        return list(request.option_scoring)
    wanted = (request.schema or {}).get("properties", {}).get(PROBABILITIES)
    return list(wanted.get("required") or wanted.get("properties") or []) if isinstance(wanted, dict) else None


class PlantedAnswerShift:
    """Uniform answers, shifted by ``amount`` toward the first code (sorted) for one group (see module)."""

    name = "planted_answer_shift"
    returns_distributions = True
    group_phrase = "Black woman"
    amount = 0.15

    def __init__(self, group_phrase: str | None = None, amount: float | None = None):
        if group_phrase is not None:
            self.group_phrase = group_phrase
        if amount is not None:
            self.amount = amount
        self._group = re.compile(rf"\b{re.escape(self.group_phrase)}\b")

    def distribution(self, codes: list[str], prompt: str) -> dict[str, float]:
        """The answer distribution for a prompt: uniform, or shifted by ``amount`` for the group."""
        k = len(codes)
        target = min(codes)
        shift = self.amount if self._group.search(prompt) else 0.0
        if shift > 1 - 1 / k:
            raise ValueError(f"a shift of {shift} cannot be planted on one of {k} uniform options")
        return {code: (1 / k + shift if code == target else (1 / k) * (1 - (1 / k + shift)) / (1 - 1 / k))
                for code in sorted(codes)}

    def reply(self, request: LLMRequest) -> ProviderReply:
        prompt = _prompt(request)
        asked = _distribution_codes(request)
        if asked is not None:
            probabilities = self.distribution(asked, prompt)
            text = distribution_reply({code: round(probabilities[code], 12) for code in sorted(asked)})
            return ProviderReply(text=text, prompt_tokens=prompt_word_count(request), completion_tokens=len(asked))
        codes = list(((request.schema or {}).get("properties", {}).get("answer") or {}).get("enum") or [])
        if not codes:
            return _reply(request, schema_instance(request.schema or {"type": "object"}, request_rng(request), ["ok"]))
        probabilities = self.distribution(codes, prompt)
        order = sorted(codes)
        pick = request_rng(request).choice(len(order), p=[probabilities[c] for c in order])
        return _reply(request, {"answer": order[int(pick)]})


class NullAnswerShift(PlantedAnswerShift):
    """``scripted/planted_answer_null``: :class:`PlantedAnswerShift` with ``amount = 0``."""

    name = "planted_answer_null"
    amount = 0.0


class PlantedTrialAgent:
    """A trial agent with a planted contradiction rate and same-side vote margin (see the module)."""

    name = "planted_trial_agent"
    contradiction_rate = 0.0
    margin = 0.0

    def __init__(self, contradiction_rate: float | None = None, margin: float | None = None):
        if contradiction_rate is not None:
            self.contradiction_rate = contradiction_rate
        if margin is not None:
            self.margin = margin

    def reply(self, request: LLMRequest) -> ProviderReply:
        prompt = "\n".join(m["content"] for m in request.messages if m.get("role") == "user")
        properties = (request.schema or {}).get("properties", {})
        rng = request_rng(request)
        if "votes" in properties:
            return _reply(request, self._votes(prompt, rng))
        if POST_FIELDS <= set(properties):
            return _reply(request, self._post(prompt, rng))
        return _reply(request, schema_instance(request.schema or {"type": "object"}, rng, prompt.split()))

    def _post(self, prompt: str, rng: np.random.Generator) -> dict:
        fields = _fields(prompt)
        lexicon = lexicon_for(fields.get("TOPIC", ""))
        stance = LABEL_TO_STANCE.get(fields.get("YOUR STANCE", "neutral"), 0)
        side = int(np.sign(stance))
        if side and rng.random() < self.contradiction_rate:
            side = -side
        words = list(rng.choice(lexicon.side_words(side), size=1 + abs(stance), replace=False)) if side else []
        words += list(rng.choice(lexicon.fillers, size=3, replace=False))
        rng.shuffle(words)
        post = f"{rng.choice(lexicon.openers)} {' '.join(words)}."
        return {"post": post, "opinion": STANCE_LABELS[stance],
                "confidence": float(fields.get("YOUR CONFIDENCE", 0.7)), "reason": "my view has not changed"}

    def _votes(self, prompt: str, rng: np.random.Generator) -> dict:
        fields = _fields(prompt)
        lexicon = lexicon_for(fields.get("TOPIC", ""))
        own = int(np.sign(LABEL_TO_STANCE.get(fields.get("YOUR STANCE", "neutral"), 0)))
        votes = []
        for line in prompt.splitlines():
            if (match := _VOTE_LINE.match(line)) is None:
                continue
            side = lexicon.infer_side(match.group(3))
            like = 0.5 + (self.margin / 2) * (own * side)
            votes.append(1 if rng.random() < like else int(rng.choice([0, -1])))
        return {"votes": votes}


class PlantedContradiction(PlantedTrialAgent):
    """``scripted/planted_contradiction``: posts argue the other side at rate 0.2; votes ignore side."""

    name = "planted_contradiction"
    contradiction_rate = 0.2


class PlantedSameSideVotes(PlantedTrialAgent):
    """``scripted/planted_same_side_votes``: same-side like rate higher than other-side by 0.2."""

    name = "planted_same_side_votes"
    margin = 0.2


class NullTrialAgent(PlantedTrialAgent):
    """``scripted/planted_trial_null``: no contradiction, no side preference in votes."""

    name = "planted_trial_null"


class PlantedStanceShift(PlantedTrialAgent):
    """``scripted/planted_stance_shift``: reported stances with noise, moved toward support for one group."""

    name = "planted_stance_shift"
    group_phrase = "Black woman"
    amount = 0.3
    noise = 0.3

    def __init__(self, group_phrase: str | None = None, amount: float | None = None, noise: float | None = None):
        super().__init__()
        if group_phrase is not None:
            self.group_phrase = group_phrase
        if amount is not None:
            self.amount = amount
        if noise is not None:
            self.noise = noise
        self._group = re.compile(rf"\b{re.escape(self.group_phrase)}\b")

    def _post(self, prompt: str, rng: np.random.Generator) -> dict:
        post = super()._post(prompt, rng)
        stance = LABEL_TO_STANCE[post["opinion"]]
        if rng.random() < self.noise:
            stance += int(rng.choice([-1, 1]))
        if self._group.search(prompt) and rng.random() < self.amount:
            stance += 1
        post["opinion"] = STANCE_LABELS[int(np.clip(stance, -3, 3))]
        return post


class NullStanceShift(PlantedStanceShift):
    """``scripted/planted_stance_null``: :class:`PlantedStanceShift` with ``amount = 0``."""

    name = "planted_stance_null"
    amount = 0.0
