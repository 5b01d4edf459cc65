"""One thread as a Mesa model: the author's opening post, then one ``step()`` per round (SynthPAI's procedure).

A round has named phases:

1. :meth:`ThreadModel.draw_critics`: ``int(engaged_profiles * p_critic)`` draws with replacement from
   the engaged personas (stream ``thread_critics``), redrawn every round;
2. :meth:`ThreadModel.plan_comments`: each engaged persona, in its turn, draws 1 to ``max_actions``
   actions; each is a comment with the round's comment probability (stream ``thread_actions``); a
   comment gets its parent (:func:`pvsst.sim.threads.parent_choice.choose_parent`, stream
   ``thread_parents``) and its length class (``p_short``, stream ``thread_lengths``) and joins the tree at
   once, so the next persona's choice sees it, as in the original;
3. :meth:`ThreadModel.write_comments`: the model calls. Where a comment goes never depends on what a
   comment says, so the structure is fixed first and the texts are written in waves: every comment
   whose parent's text is known is asked for at once, through the gateway;
4. :meth:`ThreadModel.vote` (only with ``comment_votes``): engaged personas vote on the round's comments;
5. :meth:`ThreadModel.close_round`: after ``root_candidate_rounds`` rounds the post leaves the pool.

Every draw comes from the master seed through streams keyed by the thread's index
(:class:`pvsst.sim.seeds.RandomStreams`); every request seed from the master seed, the phase, the round
and the node (:func:`pvsst.sim.seeds.request_seed`, ``hashed``).

Examples
--------
>>> from pvsst.sim.llm.gateway import Gateway
>>> from pvsst.sim.persona_table import load_persona_table
>>> from pvsst.sim.threads.plan import plan_threads
>>> from pvsst.sim.threads.settings import ThreadSettings
>>> from pvsst.sim.topics import get_topic
>>> plan = plan_threads(ThreadSettings(engaged_profiles=6), load_persona_table(), [get_topic("ai_labels")],
...                     seed=3, model_name="scripted/thread_commenter")[0]
>>> model = ThreadModel(plan, Gateway())
>>> model.run()
>>> len(model.tree) == len(model.recorder.comments.frame()), max(model.tree.depths) <= 5
(True, True)
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import mesa

from pvsst.sim.llm.prompt_table import send_on_record
from pvsst.sim.llm.types import LLMRequest, LLMResult
from pvsst.sim.seeds import PHASE_COMMENT, PHASE_THREAD_POST, RandomStreams, request_seed
from pvsst.sim.threads.parent_choice import ScoreBook, ThreadTree, choose_parent
from pvsst.sim.threads.plan import ThreadPlan
from pvsst.sim.threads.prompts import PathNode, comment_messages, load_thread_materials, post_messages
from pvsst.sim.threads.tables import COMMENT_ACTION, POST_ACTION, ThreadRecorder
from pvsst.sim.threads.votes import CommentVoting

NODE_ORDINALS = 1_000_000
"""Request-seed ordinal of node ``v`` of thread ``t``: ``t * NODE_ORDINALS + v``."""


@dataclass
class NodeText:
    """What one node of the tree says and how it was written."""

    round: int
    critic: bool = False
    length_class: str | None = None
    text: str | None = None
    reply_ok: bool = False
    prompt_sha256: str = ""
    call_id: str = ""


class ThreadAgent(mesa.Agent):
    """A participant of one thread (the author or an engaged persona): it builds its own requests."""

    def __init__(self, model: ThreadModel, persona: dict):
        super().__init__(model)
        self.persona = persona
        self.persona_id = str(persona["persona_id"])

    def request(self, messages: tuple, round: int, phase: int, phase_name: str, number: int, *, temperature: float,
                max_tokens: int, schema: dict | None = None) -> LLMRequest:
        """A request of this persona; ``number`` (the node written, or a voter's turn) sets its seed apart."""
        plan = self.model.plan
        ordinal = plan.thread_index * NODE_ORDINALS + number
        return LLMRequest(model_name=plan.model_name, messages=messages, schema=schema, temperature=temperature,
                          max_tokens=max_tokens, seed=request_seed(plan.seed, round, phase, ordinal, "hashed"),
                          trial_id=plan.thread_id, round=round, agent_id=self.persona_id, phase=phase_name)

    def post_request(self) -> LLMRequest:
        model = self.model
        return self.request(post_messages(model.materials, model.plan.topic, self.persona), -1, PHASE_THREAD_POST,
                             "thread_post", 0, temperature=model.settings.temperature,
                             max_tokens=model.settings.post_max_tokens)

    def comment_request(self, node: int) -> LLMRequest:
        model, settings = self.model, self.model.settings
        meta = model.nodes[node]
        words = settings.short_words if meta.length_class == "short" else settings.long_words
        path = [PathNode(model.tree.authors[n], model.nodes[n].text or "", model.tree.depths[n])
                for n in reversed(model.tree.path(model.tree.parents[node]))]
        messages = comment_messages(model.materials, model.plan.topic, self.persona, path, min_words=words.min,
                                    max_words=words.max, critic=meta.critic, render=settings.render)
        return self.request(messages, meta.round, PHASE_COMMENT, "comment", node, temperature=settings.temperature,
                             max_tokens=settings.max_tokens)


class ThreadModel(mesa.Model):
    """One thread of a thread study (see the module docstring)."""

    def __init__(self, plan: ThreadPlan, gateway, on_round: Callable[[int], None] | None = None):
        streams = RandomStreams(plan.seed)
        key = plan.thread_index
        super().__init__(rng=streams.generator("mesa", key))
        self.plan, self.settings, self.gateway, self.on_round = plan, plan.settings, gateway, on_round
        self.materials = load_thread_materials(plan.materials)
        self.critic_rng = streams.generator("thread_critics", key)
        self.action_rng = streams.generator("thread_actions", key)
        self.length_rng = streams.generator("thread_lengths", key)
        self.parent_rng = streams.generator("thread_parents", key)
        self.recorder = ThreadRecorder()
        self.author = ThreadAgent(self, plan.author)
        self.engaged = [ThreadAgent(self, persona) for persona in plan.engaged]
        self.by_id = {agent.persona_id: agent for agent in [self.author, *self.engaged]}
        self.tree = ThreadTree.start(self.author.persona_id)
        self.nodes = [NodeText(round=-1)]
        self.book = ScoreBook([agent.persona_id for agent in self.engaged], self.tree)
        self.pool = [0]
        self.voting = CommentVoting(self, streams.generator("thread_votes",
                                                            key)) if self.settings.comment_votes else None

    # -- the thread -----------------------------------------------------------------------------
    def run(self) -> None:
        """The opening post, then every round, then the comments table."""
        self.write_post()
        for _ in range(self.settings.n_rounds):
            self.step()
            if self.on_round is not None:
                self.on_round(self.steps)
        self.record_comments()

    def step(self) -> None:
        round = self.steps - 1  # Mesa increments `steps` before calling step()
        critics = self.draw_critics(round)
        planned = self.plan_comments(round, critics)
        self.write_comments(planned)
        if self.voting is not None:
            self.voting.vote(round, planned)
        self.close_round(round)

    # -- phases ---------------------------------------------------------------------------------
    def write_post(self) -> None:
        """The author writes the opening post (node 0)."""
        request = self.author.post_request()
        self._apply(0, request, self.call([request])[0])

    def draw_critics(self, round: int) -> set[str]:
        """This round's critics: ``critics_per_round`` draws with replacement from the engaged personas."""
        draws = self.critic_rng.choice(len(self.engaged), size=self.settings.critics_per_round, replace=True)
        return {self.engaged[int(i)].persona_id for i in draws}

    def plan_comments(self, round: int, critics: set[str]) -> list[int]:
        """Every persona's actions of this round; returns the new comments' nodes in the order they joined."""
        settings, thread_id = self.settings, self.plan.thread_id
        p_comment = settings.comment_probability_in(round)
        planned = []
        for agent in self.engaged:
            persona = agent.persona_id
            for action in range(int(self.action_rng.integers(1, settings.max_actions + 1))):
                if not self.action_rng.random() < p_comment:
                    self.recorder.actions.add(thread_id, round, persona, action, "abstain", None)
                    continue
                choice = choose_parent(self.tree, self.pool, persona, self.book.scores[persona], self.parent_rng,
                                       max_depth=settings.max_depth, max_children=settings.max_children,
                                       max_root_replies=settings.max_root_replies, top_k=settings.top_candidates,
                                       caps=settings.caps,
                                       net_votes=self.voting.net_votes if self.voting is not None else None)
                if choice is None:
                    self.recorder.actions.add(thread_id, round, persona, action, "no_parent", None)
                    continue
                self.book.take(persona, choice.node)
                length = "short" if self.length_rng.random() < settings.p_short else "long"
                node = self.tree.add(choice.node, persona)
                self.nodes.append(NodeText(round, persona in critics, length))
                self.book.add_node(self.tree, node)
                self.pool.append(node)
                if self.voting is not None:
                    self.voting.add_node()
                planned.append(node)
                self.recorder.actions.add(thread_id, round, persona, action, "comment", self.comment_id(node))
        return planned

    def write_comments(self, planned: list[int]) -> None:
        """Ask for the planned comments' texts, each wave once its parents' texts are known."""
        pending = list(planned)
        while pending:
            ready = [n for n in pending if self.nodes[self.tree.parents[n]].text is not None]
            requests = [self.by_id[self.tree.authors[n]].comment_request(n) for n in ready]
            for node, request, result in zip(ready, requests, self.call(requests), strict=True):
                self._apply(node, request, result)
            done = set(ready)
            pending = [n for n in pending if n not in done]

    def close_round(self, round: int) -> None:
        """After ``root_candidate_rounds`` rounds the post leaves the pool (no more direct replies to it)."""
        if round + 1 == self.settings.root_candidate_rounds and self.pool and self.pool[0] == 0:
            self.pool.pop(0)

    # -- helpers --------------------------------------------------------------------------------
    def comment_id(self, node: int) -> str:
        return f"{self.plan.thread_id}:{node}"

    def _apply(self, node: int, request: LLMRequest, result: LLMResult) -> None:
        meta = self.nodes[node]
        meta.reply_ok = result.ok
        meta.text = (result.text or "").strip() if result.ok else ""
        meta.prompt_sha256, meta.call_id = request.prompt_sha256(), result.record.call_id

    def call(self, requests: list[LLMRequest]) -> list[LLMResult]:
        return send_on_record(self.gateway, requests, self.recorder.prompts)

    def record_comments(self) -> None:
        """The comments table, one row per node in the order the nodes joined."""
        thread_id, tree = self.plan.thread_id, self.tree
        for node, meta in enumerate(self.nodes):
            parent = tree.parents[node]
            self.recorder.comments.add(
                self.comment_id(node), self.comment_id(parent) if parent >= 0 else None, self.comment_id(0), thread_id,
                tree.depths[node], tree.authors[node], meta.round, POST_ACTION if node == 0 else COMMENT_ACTION,
                meta.critic, meta.length_class, meta.text or "", meta.reply_ok, meta.prompt_sha256, meta.call_id)
