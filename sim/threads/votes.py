"""Votes on comments (a thread-study option, off by default; SynthPAI's procedure has none).

With ``comment_votes`` on, after a round's comments are written each engaged persona votes +1 / 0 / -1
on up to ``votes_per_voter`` of that round's comments it did not write (drawn without replacement,
stream ``thread_votes``), in one call with the ``thread_vote`` template and the vote schema of
:func:`pvsst.sim.prompts.templates.vote_schema`. A comment's net votes (ups minus downs) then rank the
candidates before the top-k cut of every later parent choice (:func:`pvsst.sim.threads.parent_choice.
top_candidates`); the softmax stays over the path scores. A ballot whose call failed counts no vote
(its rows have ``ok`` false and value 0).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pvsst.sim.prompts.templates import vote_schema
from pvsst.sim.replies import strict_votes
from pvsst.sim.seeds import PHASE_COMMENT_VOTE
from pvsst.sim.threads.prompts import vote_messages

if TYPE_CHECKING:  # pragma: no cover
    from pvsst.sim.threads.model import ThreadModel


class CommentVoting:
    """The vote phase of a thread and every node's net votes (``net_votes[v]``, the post's stays 0)."""

    def __init__(self, model: ThreadModel, rng: np.random.Generator):
        self.model, self.rng = model, rng
        self.net_votes: list[int] = [0] * len(model.tree)

    def add_node(self) -> None:
        self.net_votes.append(0)

    def vote(self, round: int, planned: list[int]) -> None:
        """Each engaged persona votes on up to ``votes_per_voter`` of ``planned`` (this round's comments)."""
        model, settings = self.model, self.model.settings
        ballots = []
        for agent in model.engaged:
            others = [n for n in planned if model.tree.authors[n] != agent.persona_id]
            if not others:
                continue
            picks = self.rng.choice(len(others), size=min(settings.votes_per_voter, len(others)), replace=False)
            ballots.append((agent, [others[int(i)] for i in picks]))
        requests = []
        for agent, targets in ballots:  # a ballot's request seed is told apart by the voter's turn
            messages = vote_messages(model.materials, model.plan.topic, agent.persona,
                                     [(model.tree.authors[n], model.nodes[n].text or "") for n in targets],
                                     render=settings.render)
            requests.append(agent.request(messages, round, PHASE_COMMENT_VOTE, "comment_vote",
                                          model.engaged.index(agent), temperature=settings.vote_temperature,
                                          max_tokens=settings.vote_max_tokens, schema=vote_schema(len(targets))))
        for (agent, targets), result in zip(ballots, model.call(requests), strict=True):
            accepted = dict(strict_votes(result.parsed, result.record.status, len(targets)))
            for position, node in enumerate(targets):
                value = accepted.get(position, 0) if result.ok else 0
                self.net_votes[node] += value
                model.recorder.comment_votes.add(model.plan.thread_id, round, agent.persona_id,
                                                 model.comment_id(node), value, result.ok)
