"""The first round of a trial, played by matched sets of agents: the engine side of a study's audit.

A counterfactual audit asks whether a persona attribute, and only it, changes what an agent does. Its
agents come in matched sets (:mod:`pvsst.personas.matched_sets`): one member per level combination of
the varied attribute(s), every other attribute equal. Here every member plays the trial's first round
exactly as an honest agent of a trial does (:class:`~pvsst.sim.model.SocialModel`: the same materials,
prompts, reply handling and request settings):

1. it writes its first-round post with an empty feed and the first-round note, from its set's initial
   stance (a balanced draw over the sets, as a trial draws its agents') and the trial's initial
   confidence; the post's reply reports its stance, which updates the member's stance as in a trial;
2. it votes on a ballot of ``votes_per_voter`` first-round posts written by members of *other* sets
   (drawn with the trial's ``votes`` stream, once per set): every member of a set, and every copy of
   the set's null, votes on the same posts, shown in the same order.

Members of a set share their request seeds (the set's number is their ordinal), so only the varied
attributes differ between their requests. Copies with ``audit_role == "arity_null"`` (the
arity-matched null) are the base persona again, each with a request seed of its own
(ordinal ``n_sets + set * copies + replicate``): the noise floor a disparity must exceed.

Examples
--------
>>> from pvsst.sim.llm.gateway import Gateway
>>> from pvsst.sim.topics import get_topic
>>> from pvsst.sim.trial.settings import TrialSetup
>>> members = pd.DataFrame({"persona_id": [f"p{s}~{g}" for s in range(3) for g in ("x", "y")],
...     "set_id": [f"p{s}" for s in range(3) for g in ("x", "y")], "group": ["x", "y"] * 3,
...     "audit_role": "audit", "replicate": -1, "label": "a voter", "card": "A voter.",
...     "posting_style": "plain"})
>>> cfg = TrialSetup(trial_id="audit", model_name="scripted/imitate", topic=get_topic("ai_labels"),
...                  condition="control", seed=101, n_agents=2, n_rounds=1, votes_per_voter=2)
>>> result = run_first_round_audit(cfg, members, Gateway())
>>> len(result.posts), len(result.votes), int(result.agents.groupby("set_id")["ordinal"].nunique().max())
(6, 12, 1)
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import networkx as nx
import numpy as np
import pandas as pd

from pvsst.core.errors import InputError
from pvsst.sim.accounts import honest_ids
from pvsst.sim.agents import HonestAgent
from pvsst.sim.llm.types import CALL_RECORD_FIELDS
from pvsst.sim.model import SocialModel
from pvsst.sim.persona_table import load_persona_table
from pvsst.sim.platform_state import Post
from pvsst.sim.stance import balanced_initial_stances
from pvsst.sim.trial.run import agents_frame
from pvsst.sim.trial.settings import TrialSetup

MEMBER_COLUMNS = ("set_id", "group", "audit_role", "replicate")
NULL_ROLE = "arity_null"


def member_ordinals(members: pd.DataFrame) -> np.ndarray:
    """The ordinal (hence the request seeds) of every member: its set's number for a matched-set
    member, ``n_sets + set * copies + replicate`` for a copy of the arity-matched null.

    Examples
    --------
    >>> frame = pd.DataFrame({"set_id": ["a", "a", "b", "b", "a", "a"],
    ...                       "audit_role": ["audit"] * 4 + ["arity_null"] * 2,
    ...                       "replicate": [-1, -1, -1, -1, 0, 1]})
    >>> member_ordinals(frame).tolist()
    [0, 0, 1, 1, 2, 3]
    """
    sets = pd.Index(pd.unique(members["set_id"]))
    number = sets.get_indexer(members["set_id"])
    is_null = (members["audit_role"] == NULL_ROLE).to_numpy()
    copies = int(members.loc[is_null, "replicate"].max()) + 1 if is_null.any() else 0
    return np.where(is_null, len(sets) + number * copies + members["replicate"].to_numpy(dtype=np.int64), number)


class FirstRoundAudit(SocialModel):
    """The first round of ``config``'s trial for the matched sets in ``members`` (see the module)."""

    def __init__(self, config: TrialSetup, members: pd.DataFrame, gateway):
        for column in MEMBER_COLUMNS:
            if column not in members.columns:
                raise InputError("audit members", column, "missing column")
        self.members = members.reset_index(drop=True)
        super().__init__(config, gateway, personas=self.members)

    def _create_honest(self, table: pd.DataFrame) -> list[HonestAgent]:
        members = load_persona_table(table)
        self.persona_rows = members
        sets = pd.unique(members["set_id"])
        stance_of = dict(zip(sets, balanced_initial_stances(len(sets), self.streams.generator("stances"))))
        ids, ordinals = honest_ids(len(members)), member_ordinals(members)
        return [HonestAgent(self, ids[i], int(ordinals[i]), persona, stance_of[persona["set_id"]],
                            self.config.initial_confidence)
                for i, persona in enumerate(members.to_dict("records"))]

    def _create_adversaries(self) -> list:
        return []

    def _initial_graph(self) -> nx.DiGraph:
        return nx.DiGraph()  # the first round reads no feed: the network is never consulted

    def run(self) -> None:
        """Post, vote on the shared ballots, record: the first round only."""
        self.write_posts(0, self.render_feeds(0))
        self.vote(0)
        self.record(0)

    def _vote_samples(self, round: int, posts: list[Post]) -> list[tuple[HonestAgent, list[int]]]:
        set_of = [agent.persona["set_id"] for agent in self.honest]
        authors = [i for i, agent in enumerate(self.honest) if agent.persona["audit_role"] != NULL_ROLE]
        k = self.config.votes_per_voter
        ballots: dict[str, list[int]] = {}
        for set_id in pd.unique(pd.Series(set_of)):
            others = [i for i in authors if set_of[i] != set_id]
            n = min(k, len(others))
            ballots[set_id] = [others[i] for i in self.vote_rng.choice(len(others), size=n, replace=False)] if n else []
        return [(agent, ballots[set_of[i]]) for i, agent in enumerate(self.honest) if ballots[set_of[i]]]


@dataclass
class AuditRound:
    """The tables of one audit round: ``agents`` (one row per member, with its ordinal), ``posts``,
    ``votes`` and the call records (``llm_calls``, ``prompts``), as a trial stores them."""

    agents: pd.DataFrame
    posts: pd.DataFrame
    votes: pd.DataFrame
    llm_calls: pd.DataFrame
    prompts: pd.DataFrame
    elapsed_s: float

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"agents": self.agents, "posts": self.posts, "votes": self.votes, "llm_calls": self.llm_calls,
                "prompts": self.prompts}


def run_first_round_audit(config: TrialSetup, members: pd.DataFrame, gateway) -> AuditRound:
    """Play the first round for every member of ``members`` through ``gateway`` (see the module)."""
    started = time.perf_counter()
    gateway.drain_records()
    model = FirstRoundAudit(config, members, gateway)
    model.run()
    calls = pd.DataFrame([r.to_dict() for r in gateway.drain_records()], columns=list(CALL_RECORD_FIELDS))
    agents = agents_frame(model)
    agents.insert(2, "ordinal", [agent.ordinal for agent in model.accounts])
    rec = model.recorder
    return AuditRound(agents, rec.posts.frame(), rec.votes.frame(), calls, rec.prompts.frame(),
                      time.perf_counter() - started)

