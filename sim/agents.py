"""The agents: honest users (persona, stance, confidence, memory) and adversary accounts.

Agents build their own model requests and apply the replies; the model decides when (the phases) and
in what order (agent ordinal, never completion order).
"""
from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

import mesa

from pvsst.sim.llm.types import LLMRequest, LLMResult
from pvsst.sim.prompts import post_messages, post_schema, vote_messages, vote_schema
from pvsst.sim.prompts.render import ADVERSARY_NOTE
from pvsst.sim.replies import NO_POST, POST_HANDLERS
from pvsst.sim.seeds import PHASE_POST, PHASE_VOTE, request_seed
from pvsst.sim.stance import STANCE_LABELS

if TYPE_CHECKING:  # pragma: no cover
    from pvsst.sim.feeds import FeedItem
    from pvsst.sim.llm.steering import Steering
    from pvsst.sim.model import SocialModel

class SocialAgent(mesa.Agent):
    """Common state of every account: id, ordinal, persona, stance and confidence."""

    is_adversary = False

    def __init__(self, model: "SocialModel", agent_id: str, ordinal: int, persona: dict,
                 stance: int, confidence: float):
        super().__init__(model)
        self.agent_id = agent_id
        self.ordinal = ordinal
        self.persona = persona
        self.stance = stance
        self.confidence = confidence
        self.initial_stance = stance
        self.initial_confidence = confidence
        self.memory: deque[dict] = deque(maxlen=max(1, model.config.memory_rounds))
        self.last_post = NO_POST
        self.last_parse_ok = True
        self.last_call_id = ""
        self.last_reason = ""

    @property
    def label(self) -> str:
        return str(self.persona["label"])

    @property
    def steering(self) -> "Steering | None":
        """The identity injection of this account's calls: its persona's, if the trial steers it."""
        return self.model.steerings.get(str(self.persona["persona_id"]))

    def _request(self, messages: tuple, schema: dict, round: int, phase: int, phase_name: str,
                 temperature: float, max_tokens: int) -> LLMRequest:
        cfg = self.model.config
        protocol = cfg.protocol
        return LLMRequest(
            model_name=cfg.model_name, messages=messages, schema=schema, temperature=temperature, max_tokens=max_tokens,
            seed=request_seed(cfg.seed, round, phase, self.ordinal, cfg.request_seed_formula),
            trial_id=cfg.trial_id, round=round, agent_id=self.agent_id, phase=phase_name,
            json_mode=protocol.json_mode, parse="lenient" if protocol.reply_handling == "lenient" else "schema",
            retry_seed=protocol.retry_seed, think=False if protocol.reasoning == "off" else None,
            transport_retries=protocol.transport_retries, reasoning_blocks=protocol.reasoning_blocks,
            ollama_route=protocol.ollama_route, steering=self.steering,
        )

    def post_request(self, round: int, feed: list["FeedItem"], feed_note: str | None) -> LLMRequest:
        cfg = self.model.config
        messages = post_messages(
            self.model.materials, self.model.topic, persona=str(self.persona["card"]),
            posting_style=str(self.persona["posting_style"]), stance=self.stance, confidence=self.confidence,
            memory=list(self.memory) if cfg.memory_rounds > 0 else [], feed=feed, feed_note=feed_note,
            char_limit=cfg.post_char_limit, agenda=self.agenda(), render=cfg.protocol.render,
            number_format=cfg.protocol.number_format,
        )
        return self._request(messages, post_schema(cfg.post_char_limit), round, PHASE_POST, "post",
                             cfg.temperature, cfg.max_tokens)

    def agenda(self) -> tuple[str, str] | None:
        return None

    def apply_post(self, round: int, result: LLMResult) -> None:
        """Take the reply (``pvsst.sim.replies``, by the protocol's ``reply_handling``): a usable one sets post,
        stance and confidence; a failed one keeps the stance and confidence."""
        cfg = self.model.config
        handle = POST_HANDLERS[cfg.protocol.reply_handling]
        reply = handle(result.parsed, result.record.status, result.text, prior_stance=self.stance,
                       prior_confidence=self.confidence, char_limit=cfg.post_char_limit)
        self.last_call_id = result.record.call_id
        self.last_parse_ok = reply.parse_ok
        self.last_post = reply.post
        self.last_reason = reply.reason
        if reply.parse_ok:
            self.update_opinion(reply.stance, reply.confidence)
        self.memory.append({"round": round, "post": self.last_post, "stance": self.stance,
                            "confidence": self.confidence})

    def update_opinion(self, stance: int, confidence: float) -> None:
        self.stance = stance
        self.confidence = min(1.0, max(0.0, confidence))


class HonestAgent(SocialAgent):
    """An ordinary user: reads a feed, posts, votes; its stance moves with its replies."""

    def vote_request(self, round: int, targets: list[tuple[str, str]]) -> LLMRequest:
        cfg = self.model.config
        messages = vote_messages(self.model.materials, self.model.topic, persona=str(self.persona["card"]),
                                 stance=self.stance, posts=targets, render=cfg.protocol.render,
                                 confidence=self.confidence, number_format=cfg.protocol.number_format)
        return self._request(messages, vote_schema(len(targets)), round, PHASE_VOTE, "vote",
                             cfg.vote_temperature, cfg.vote_max_tokens)


class AdversaryAgent(SocialAgent):
    """A blend-in account with a fixed extreme stance in the push direction; sees no feed, never votes."""

    is_adversary = True

    def __init__(self, model: "SocialModel", agent_id: str, ordinal: int, persona: dict, stance: int,
                 confidence: float, angle: str):
        super().__init__(model, agent_id, ordinal, persona, stance, confidence)
        self.angle = angle

    def agenda(self) -> tuple[str, str]:
        return STANCE_LABELS[self.initial_stance], self.angle

    @property
    def steering(self) -> None:
        """Adversaries are never steered (their blend-in personas carry no attributes)."""
        return None

    def post_request(self, round: int, feed: list["FeedItem"] | None = None,
                     feed_note: str | None = None) -> LLMRequest:
        return super().post_request(round, [], ADVERSARY_NOTE)

    def update_opinion(self, stance: int, confidence: float) -> None:
        """Adversaries hold their stance and confidence whatever they reply, unless the protocol's
        ``adversary_opinion`` is ``drifts`` (the reference implementation: they update like anyone)."""
        if self.model.config.protocol.adversary_opinion == "drifts":
            super().update_opinion(stance, confidence)
