"""``scripted/imitate``: the mechanistic null model (no language model).

Agents write stance-bearing sentences from per-topic lexicons, copy content words from the posts they
see with a set probability (top feed slots first), drift one step toward the like-weighted side of their
feed with a set probability, and vote by stance agreement. Everything is a pure function of the request
and its seed, so it is identical across processes.

Under it the likes-ranked feed (everyone sees the same top posts) raises lexical similarity over the
control arm, which is what the instrument must be able to detect.

Examples
--------
>>> from pvsst.sim.llm.types import LLMRequest
>>> from pvsst.sim.prompts import vote_schema
>>> req = LLMRequest(model_name="scripted/imitate", seed=2, schema=vote_schema(2), messages=(
...     {"role": "user", "content": 'TOPIC: Should AI-generated content be labeled on social platforms?\\n'
...      'YOU: x\\nYOUR STANCE: strongly support\\n[0] @a01: "labels build trust"\\n'
...      '[1] @a02: "labels create stigma for artists"'},))
>>> ImitateProvider().reply(req).text
'{"votes": [1, -1]}'
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np
import yaml

from pvsst.sim.llm.providers.scripted import schema_instance
from pvsst.sim.llm.types import LLMRequest, ProviderReply
from pvsst.sim.stance import LABEL_TO_STANCE, STANCE_LABELS
from pvsst.sim.topics import builtin_topics

_FEED_LINE = re.compile(r'^- (?:\[(\d+) likes\] )?@(\S+) \((.*?)\): "(.*)"$')
_VOTE_LINE = re.compile(r'^\[(\d+)\] @(\S+): "(.*)"$')
# The field lines and phrases of pvsst's own materials (sim/materials/pvsst): this null model reads them.
_FIELD = re.compile(r"^(TOPIC|YOUR STANCE|YOUR CONFIDENCE): (.*)$")
_LIMIT = re.compile(r"max (\d+) characters")
_ANGLE = re.compile(r'phrased freshly each time: "(.*?)"')
_WORD = re.compile(r"[a-z][a-z\-]{3,}")
POST_FIELDS = {"post", "opinion", "confidence", "reason"}  # the simulation's post schema


@dataclass(frozen=True)
class Lexicon:
    support: tuple[str, ...]
    oppose: tuple[str, ...]
    fillers: tuple[str, ...]
    openers: tuple[str, ...]

    def side_words(self, side: int) -> tuple[str, ...]:
        return self.support if side > 0 else self.oppose

    @property
    def _sets(self) -> tuple[frozenset[str], frozenset[str]]:
        sets = self.__dict__.get("_word_sets")
        if sets is None:
            sets = self.__dict__["_word_sets"] = (frozenset(self.support), frozenset(self.oppose))
        return sets

    def infer_net(self, text: str) -> int:
        """Distinct support words minus distinct oppose words in ``text``."""
        words = set(_WORD.findall(text.lower()))
        support, oppose = self._sets
        return len(words & support) - len(words & oppose)

    def infer_side(self, text: str) -> int:
        """+1 / -1 / 0 by counts of support and oppose words in ``text``."""
        score = self.infer_net(text)
        return (score > 0) - (score < 0)


@lru_cache(maxsize=1)
def _lexicon_data() -> dict:
    text = resources.files("pvsst.sim.data").joinpath("imitate_lexicons.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


@lru_cache(maxsize=64)
def lexicon_for(question: str) -> Lexicon:
    """The lexicon of a built-in topic (matched by its question), else generic words + the question's."""
    data = _lexicon_data()
    generic = data["generic"]
    support, oppose = list(generic["support"]), list(generic["oppose"])
    for topic in builtin_topics().values():
        if topic.question == question and topic.id in data["topics"]:
            support = data["topics"][topic.id]["support"] + support
            oppose = data["topics"][topic.id]["oppose"] + oppose
            break
    return Lexicon(tuple(support), tuple(oppose), tuple(data["fillers"]), tuple(data["openers"]))


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    # lazy: scikit-learn takes ~1 s to import; only this word filter of the imitation model needs it
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def content_words(text: str) -> list[str]:
    stop = _stop_words()
    return [w for w in _WORD.findall(text.lower()) if w not in stop]


class ImitateProvider:
    """Mechanistic agents: lexicon posts, feed imitation, drift toward liked sides, agreement votes."""

    name = "imitate"

    def __init__(self, imitation_probability: float = 0.9, update_probability: float = 0.3,
                 vote_noise: float = 0.1):
        self.imitation_probability = imitation_probability
        self.update_probability = update_probability
        self.vote_noise = vote_noise

    def reply(self, request: LLMRequest) -> ProviderReply:
        prompt = "\n".join(m["content"] for m in request.messages if m.get("role") == "user")
        digest = hashlib.sha256(prompt.encode()).digest()
        rng = np.random.default_rng([int(request.seed or 0) & 0xFFFFFFFF, int.from_bytes(digest[:8], "big")])
        properties = (request.schema or {}).get("properties", {})
        if "votes" in properties:
            payload = self._vote(prompt, rng)
        elif POST_FIELDS <= set(properties):
            payload = self._post(prompt, rng)
        elif request.schema is not None:
            # Any other schema: a valid instance built from the prompt's own content words.
            payload = schema_instance(request.schema, rng, content_words(prompt) or prompt.split())
        else:
            text = " ".join(content_words(prompt)[-12:])
            return ProviderReply(text, len(prompt.split()), len(text.split()))
        text = json.dumps(payload)
        return ProviderReply(text, len(prompt.split()), len(text.split()))

    # -- posts ---------------------------------------------------------------------------------
    def _post(self, prompt: str, rng: np.random.Generator) -> dict:
        fields = _fields(prompt)
        lexicon = lexicon_for(fields.get("TOPIC", ""))
        stance = LABEL_TO_STANCE.get(fields.get("YOUR STANCE", "neutral"), 0)
        confidence = float(fields.get("YOUR CONFIDENCE", 0.7))
        limit = int(m.group(1)) if (m := _LIMIT.search(prompt)) else 180
        angle = m.group(1) if (m := _ANGLE.search(prompt)) else None
        matches = [_FEED_LINE.match(line) for line in prompt.splitlines()]
        feed = [(int(m.group(1) or 0), m.group(4)) for m in matches if m is not None]

        side = int(np.sign(stance)) or int(rng.choice([-1, 1]))
        words = list(rng.choice(lexicon.side_words(side), size=1 + abs(stance), replace=False))
        if angle:
            words += content_words(angle)[:4]
        words += list(rng.choice(lexicon.fillers, size=3, replace=False))
        for position, (_, text) in enumerate(feed):
            # Top slots are copied most: that is what makes a shared ranking converge vocabulary.
            if rng.random() < self.imitation_probability / (1 + position):
                copied = content_words(text)
                if copied:
                    words += list(rng.choice(copied, size=min(3, len(copied)), replace=False))
        rng.shuffle(words)
        post = f"{rng.choice(lexicon.openers)} {' '.join(dict.fromkeys(words))}."[:limit]

        new_stance, reason = stance, "nothing in my feed changed my mind"
        signal = sum((likes + 1) * lexicon.infer_side(text) for likes, text in feed)
        if angle is None and signal and rng.random() < self.update_probability:
            step = 1 if signal > 0 else -1
            new_stance = max(-3, min(3, stance + step))
            reason = f"posts I saw leaned {'support' if step > 0 else 'oppose'}"
        agree = (signal > 0) == (stance > 0) if signal and stance else True
        confidence = max(0.0, min(1.0, confidence + (0.05 if agree else -0.05)))
        return {"post": post, "opinion": STANCE_LABELS[new_stance], "confidence": round(confidence, 2),
                "reason": reason}

    # -- votes ---------------------------------------------------------------------------------
    def _vote(self, prompt: str, rng: np.random.Generator) -> dict:
        fields = _fields(prompt)
        lexicon = lexicon_for(fields.get("TOPIC", ""))
        stance = LABEL_TO_STANCE.get(fields.get("YOUR STANCE", "neutral"), 0)
        votes = []
        for line in prompt.splitlines():
            if (match := _VOTE_LINE.match(line)) is None:
                continue
            side = lexicon.infer_side(match.group(3))
            if rng.random() < self.vote_noise or side == 0 or stance == 0:
                votes.append(0)
            elif side == ((stance > 0) - (stance < 0)):
                votes.append(1)
            else:
                votes.append(-1 if abs(stance) >= 2 else 0)
        return {"votes": votes}


def _pick(words, k: int, rng: np.random.Generator) -> list[str]:
    """Up to ``k`` distinct entries of ``words`` in random order."""
    k = min(k, len(words))
    return [words[i] for i in rng.choice(len(words), size=k, replace=False)]


def _fields(prompt: str) -> dict[str, str]:
    return {m.group(1): m.group(2).strip() for line in prompt.splitlines() if (m := _FIELD.match(line))}
