"""A stance judge backed by a language model, called through the gateway like every model call.

Each post is one request: the judge templates (:mod:`pvsst.sim.judges.materials`) filled with the
topic's question and the post, a reply schema ``{"stance": one of the seven labels}``, temperature 0 by
default and one request seed for every post (the posts differ, so every request has its own cache key).
The requests carry the post's ``trial_id``, ``round`` and ``agent_id`` and the phase ``judge``, so the
gateway's provenance records (:attr:`LLMJudge.records`) say which post each call judged; a reply that
fails its schema after the gateway's attempts is not a label: it comes back as ``None`` (not judged).

:func:`make_judge` turns a judge name into a judge: ``lexicon`` (no model) or any model string.

Examples
--------
>>> from pvsst.sim.llm.gateway import Gateway
>>> from pvsst.sim.topics import get_topic
>>> with Gateway() as gateway:
...     judge = make_judge("scripted/lexicon_judge", gateway)
...     labels = judge.judge(["labels build trust, provenance and clarity"], get_topic("ai_labels"))
>>> labels, judge.records[0].phase, judge.records[0].status
(['strongly support'], 'judge', 'ok')
"""
from __future__ import annotations

from collections.abc import Sequence

from pvsst.core.errors import InputError
from pvsst.sim.judges.lexicon import LexiconJudge
from pvsst.sim.judges.materials import JudgeMaterials, load_judge_materials
from pvsst.sim.judges.stance_judge import StanceJudge
from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.llm.providers.registry import ensure_runnable
from pvsst.sim.llm.types import CallRecord, LLMRequest, LLMResult
from pvsst.sim.stance import OPINION_CHOICES
from pvsst.sim.topics import Topic

JUDGE_PHASE = "judge"
JUDGE_SCHEMA = {"type": "object", "properties": {"stance": {"type": "string", "enum": list(OPINION_CHOICES)}},
                "required": ["stance"], "additionalProperties": False}
"""The reply a judge request asks for."""
JUDGE_MAX_TOKENS = 24
LEXICON = "lexicon"
JUDGE_TEMPERATURE = 0.0
"""A judge's default sampling temperature (its most likely label where the provider honours it)."""


class LLMJudge:
    """A stance judge asking ``model`` through ``gateway`` (see the module docstring).

    Parameters
    ----------
    model : the judge's model string.
    gateway : the gateway every call goes through (its cache answers repeated judgments).
    materials : the judge templates (default: pvsst's).
    seed : the request seed of every judge request.
    temperature : the sampling temperature (0: the model's most likely label where the provider honours it).
    """

    records_calls = True

    def __init__(self, model: str, gateway: Gateway, materials: JudgeMaterials | None = None, *, seed: int = 0,
                 temperature: float = JUDGE_TEMPERATURE):
        ensure_runnable(model)
        self.name, self.model, self.gateway = model, model, gateway
        self.materials = materials if materials is not None else load_judge_materials()
        self.seed, self.temperature = int(seed), float(temperature)
        self.records: list[CallRecord] = []
        self.requests: list[LLMRequest] = []

    def request(self, text: str, topic: Topic, key: tuple[str, int, str] = ("", -1, "")) -> LLMRequest:
        """The request that judges one post; ``key`` is the post's (trial_id, round, agent_id)."""
        return LLMRequest(model_name=self.model, messages=self.materials.messages(topic.question, text),
                          schema=JUDGE_SCHEMA, temperature=self.temperature, max_tokens=JUDGE_MAX_TOKENS,
                          seed=self.seed, trial_id=str(key[0]), round=int(key[1]), agent_id=str(key[2]),
                          phase=JUDGE_PHASE)

    def judge(self, texts: Sequence[str], topic: Topic,
              keys: Sequence[tuple[str, int, str]] | None = None) -> list[str | None]:
        """One label per text (``None`` where the call failed); the calls' records go to :attr:`records`."""
        keys = list(keys) if keys is not None else [("", -1, "")] * len(texts)
        if len(keys) != len(texts):
            raise InputError(f"judge {self.name}", "keys", f"{len(keys)} keys for {len(texts)} posts")
        requests = [self.request(text, topic, key) for text, key in zip(texts, keys)]
        results = self.gateway.run(requests)
        self.gateway.drain_records()
        self.requests += requests
        self.records += [result.record for result in results]
        return [_label(result) for result in results]


def _label(result: LLMResult) -> str | None:
    if not result.ok or not isinstance(result.parsed, dict):
        return None
    label = result.parsed.get("stance")
    return label if label in OPINION_CHOICES else None


def make_judge(name: str, gateway: Gateway | None = None, materials: JudgeMaterials | None = None, *,
               seed: int = 0) -> StanceJudge:
    """``lexicon`` -> :class:`~pvsst.sim.judges.lexicon.LexiconJudge`; a model string -> :class:`LLMJudge`
    (which needs ``gateway``). An unknown model is an :class:`InputError` naming it.

    Examples
    --------
    >>> make_judge("lexicon").name
    'lexicon'
    """
    if name == LEXICON:
        return LexiconJudge()
    if gateway is None:
        raise InputError("judge", name, "a language-model judge needs a gateway")
    return LLMJudge(name, gateway, materials, seed=seed)
