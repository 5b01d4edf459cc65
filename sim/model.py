"""The peer-voted social network as a Mesa model: one ``step()`` is one round of the protocol.

Each round: render feeds, write posts, vote, update the network, record. Model calls of a phase run
concurrently through the gateway; replies are applied in agent ordinal order.

Examples
--------
>>> from pvsst.sim.topics import get_topic
>>> from pvsst.sim.trial.settings import TrialSetup
>>> from pvsst.sim.llm.gateway import Gateway
>>> cfg = TrialSetup(trial_id="demo", model_name="scripted/imitate", topic=get_topic("ai_labels"),
...                   condition="likes", seed=101, n_agents=6, n_rounds=2)
>>> model = SocialModel(cfg, Gateway())
>>> model.run()
>>> len(model.recorder.posts), len(model.recorder.exposures)
(12, 30)
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import mesa
import networkx as nx
import pandas as pd

from pvsst.sim.accounts import adversary_ids, honest_ids, viewer_ordinal
from pvsst.sim.agents import AdversaryAgent, HonestAgent, SocialAgent
from pvsst.sim.feeds import FeedItem, Viewer, get_feed_policy, with_adversary_slot
from pvsst.sim.llm.prompt_table import send_on_record
from pvsst.sim.llm.steering import Steering
from pvsst.sim.llm.types import LLMRequest, LLMResult
from pvsst.sim.materials import load_materials
from pvsst.sim.network import build_follow_graph
from pvsst.sim.persona_table import cycle_personas, draw_personas, load_persona_table
from pvsst.sim.platform_state import Platform, Post
from pvsst.sim.prompts.render import CONTROL_NOTE, FIRST_ROUND_NOTE
from pvsst.sim.recorder import TrialRecorder
from pvsst.sim.replies import VOTE_HANDLERS
from pvsst.sim.seeds import RandomStreams
from pvsst.sim.stance import balanced_initial_stances, extreme_stance, reference_initial_stances
from pvsst.sim.trial.settings import TrialSetup
from pvsst.sim.votes import reference_vote_samples


class ExposureCheckError(RuntimeError):
    """The trial delivered a different number of adversarial impressions than its design requires."""


class SocialModel(mesa.Model):
    """One trial of the peer-voted testbed.

    ``steerings`` maps a persona id to the identity injection of its honest agents' post and vote calls
    (:class:`~pvsst.sim.llm.steering.Steering`); a persona without one, and every adversary, is unsteered.
    """

    def __init__(self, config: TrialSetup, gateway, personas: pd.DataFrame | None = None,
                 on_round: Callable[[int], None] | None = None,
                 steerings: Mapping[str, Steering] | None = None):
        self.streams = RandomStreams(config.seed)
        super().__init__(rng=self.streams.generator("mesa"))
        self.config = config
        self.protocol = config.protocol
        self.gateway = gateway
        self.topic = config.topic
        self.materials = load_materials(config.protocol.materials)
        self.recorder = TrialRecorder()
        self.on_round = on_round
        self.steerings = dict(steerings or {})
        self.feed_policy = get_feed_policy(config.arm.feed_policy)
        self.feed_rng = self.streams.generator("feeds")
        self.vote_rng = self.streams.generator("votes")
        self.honest = self._create_honest(load_persona_table(
            personas if personas is not None else self.materials.persona_path("honest_personas")))
        self.adversaries = self._create_adversaries()
        self.accounts: list[SocialAgent] = [*self.honest, *self.adversaries]
        # The number each viewer has in the adversary-slot rotation (checked here, before any call).
        self.viewer_numbers = {a.agent_id: viewer_ordinal(a.agent_id, a.ordinal, self.protocol.viewer_ordinal)
                               for a in self.honest}
        self.platform = Platform(self._initial_graph())
        self._graph_changed = False
        self._record_edges(0)

    # -- population -----------------------------------------------------------------------------
    def _create_honest(self, table: pd.DataFrame) -> list[HonestAgent]:
        cfg, protocol = self.config, self.protocol
        if protocol.persona_order == "cycle":
            personas = cycle_personas(table, cfg.n_agents)
        else:
            personas = draw_personas(table, cfg.n_agents, self.streams.generator("personas"))
        self.persona_rows = personas
        if protocol.initial_stances == "reference":
            stances = reference_initial_stances(cfg.n_agents, cfg.seed)
        else:
            stances = balanced_initial_stances(cfg.n_agents, self.streams.generator("stances"))
        # The id scheme is a study material; the reference setting overrides it with PV-SST's ids.
        ids = (self.materials.account_ids("honest", cfg.n_agents) if protocol.account_ids == "materials"
               else honest_ids(cfg.n_agents, protocol.account_ids))
        return [
            HonestAgent(self, ids[i], i, personas.iloc[i].to_dict(), stances[i], cfg.initial_confidence)
            for i in range(cfg.n_agents)
        ]

    def _create_adversaries(self) -> list[AdversaryAgent]:
        cfg = self.config
        if not cfg.arm.adversarial:
            return []
        blend_in = load_persona_table(self.materials.persona_path("adversary_personas"))
        angle = cfg.topic.support_angle if cfg.push_direction == "support" else cfg.topic.oppose_angle
        ids = (self.materials.account_ids(cfg.arm.adversary_mode, cfg.n_adversaries)
               if self.protocol.account_ids == "materials"
               else adversary_ids(cfg.condition, cfg.n_adversaries, self.protocol.account_ids))
        return [
            AdversaryAgent(self, ids[j], cfg.n_agents + j, blend_in.iloc[j % len(blend_in)].to_dict(),
                           extreme_stance(cfg.push_direction), cfg.adversary_confidence, angle)
            for j in range(cfg.n_adversaries)
        ]

    def _initial_graph(self) -> nx.DiGraph:
        cfg = self.config
        ids = [a.agent_id for a in self.honest]
        needs_graph = cfg.network.kind != "complete" or cfg.follow_dynamics or cfg.feed_candidates == "followees" \
            or cfg.arm.feed_policy == "follows_chronological"
        if not needs_graph:
            return nx.DiGraph()  # complete network, implicit: everyone sees everyone
        return build_follow_graph(cfg.network, ids, self.persona_rows, self.streams.generator("network"))

    # -- the round ------------------------------------------------------------------------------
    def step(self) -> None:
        round = self.steps - 1  # Mesa increments `steps` before calling step()
        feeds = self.render_feeds(round)
        self.write_posts(round, feeds)
        self.vote(round)
        self.update_network(round)
        self.record(round)

    def run(self) -> None:
        """Run every round, then check the adversarial exposures."""
        for _ in range(self.config.n_rounds):
            self.step()
            if self.on_round is not None:
                self.on_round(self.steps)
        self.check_exposures()

    # -- phases ---------------------------------------------------------------------------------
    def render_feeds(self, round: int) -> dict[str, tuple[list[FeedItem], str | None]]:
        """Each honest agent's feed for this round (and the exposure rows)."""
        cfg = self.config
        adversary_posts = self.platform.adversary_posts(round - 1) if round > 0 else []
        feeds: dict[str, tuple[list[FeedItem], str | None]] = {}
        for agent in self.honest:
            viewer = Viewer(agent.agent_id, self.viewer_numbers[agent.agent_id])
            if round == 0:
                feeds[agent.agent_id] = ([], FIRST_ROUND_NOTE)
                continue
            if cfg.arm.feed_policy == "none":
                feeds[agent.agent_id] = ([], CONTROL_NOTE)
                continue
            feed = self.feed_policy(self.platform, viewer, round, self.feed_rng, cfg.feed_size, cfg.feed_candidates)
            if cfg.arm.adversarial:
                feed = with_adversary_slot(feed, adversary_posts, viewer, round, cfg.seed, cfg.feed_size)
            feeds[agent.agent_id] = (feed, None)
            for position, item in enumerate(feed):
                self.recorder.exposures.add(cfg.trial_id, round, agent.agent_id, position, item.agent_id,
                                            item.likes if item.show_likes else None, item.is_adversarial)
        return feeds

    def write_posts(self, round: int, feeds: dict[str, tuple[list[FeedItem], str | None]]) -> None:
        """Every account posts; honest stances and confidences update from valid replies."""
        requests = [a.post_request(round, *feeds[a.agent_id]) if not a.is_adversary else a.post_request(round)
                    for a in self.accounts]
        for agent, result in zip(self.accounts, self.call(requests), strict=True):
            agent.apply_post(round, result)
        self.platform.publish(round, [
            Post(round, a.agent_id, a.label, a.last_post, a.stance, a.confidence, a.last_parse_ok,
                 a.is_adversary, a.last_call_id)
            for a in self.accounts
        ])

    def vote(self, round: int) -> None:
        """Each honest agent votes +1 / 0 / -1 on up to k posts of this round other than its own."""
        cfg = self.config
        posts = self.platform.posts_of_round(round)
        ballots = [(agent, [posts[i] for i in picks]) for agent, picks in self._vote_samples(round, posts)]
        requests = [agent.vote_request(round, [(p.agent_id, p.text) for p in targets]) for agent, targets in ballots]
        take_votes = VOTE_HANDLERS[self.protocol.reply_handling]
        for (agent, targets), result in zip(ballots, self.call(requests), strict=True):
            accepted = take_votes(result.parsed, result.record.status, len(targets))
            ballot_ok = result.ok
            if not ballot_ok or (not accepted and self.protocol.vote_error_denominator == "voters"):
                # A failed ballot counts no vote; its rows (value 0) keep the failure on record. Under
                # `voters` a parsed reply without one usable vote is a cast ballot with no vote: rows of
                # value 0 that parsed, so the call counts in the rate's denominator and not as a failure.
                accepted = [(position, 0) for position in range(len(targets))]
            values = [0] * len(targets)
            for position, value in accepted:
                post = targets[position]
                values[position] = value
                post.likes += value > 0
                post.downvotes += value < 0
                self.recorder.votes.add(cfg.trial_id, round, agent.agent_id, post.agent_id, value, ballot_ok)
            if cfg.follow_dynamics:
                self._follow_from_votes(agent, targets, values)
        self.platform.invalidate_rankings()

    def _vote_samples(self, round: int, posts: Sequence[Post]) -> list[tuple[HonestAgent, list[int]]]:
        """Each honest voter and the indices (into ``posts``) of the posts it votes on."""
        k = self.config.votes_per_voter
        if self.protocol.vote_sampling == "reference":
            authors = [p.agent_id for p in posts]
            samples = reference_vote_samples(authors, [a.agent_id for a in self.honest], k, self.config.seed, round)
            return [(agent, picks) for agent, picks in zip(self.honest, samples) if picks]
        out = []
        for agent in self.honest:
            n = min(k, len(posts) - 1)
            if n <= 0:
                continue
            # Sample n of the other posts: draw from n - 1 slots and skip over the voter's own post.
            picks = self.vote_rng.choice(len(posts) - 1, size=n, replace=False)
            out.append((agent, [int(i + (i >= agent.ordinal)) for i in picks]))
        return out

    def _follow_from_votes(self, agent: HonestAgent, targets: Sequence[Post], values: Sequence[int]) -> None:
        graph = self.platform.follow_graph
        for post, value in zip(targets, values):
            if post.is_adversarial:
                continue
            if value > 0 and not graph.has_edge(agent.agent_id, post.agent_id):
                graph.add_edge(agent.agent_id, post.agent_id)
                self._graph_changed = True
            elif value < 0 and graph.has_edge(agent.agent_id, post.agent_id):
                graph.remove_edge(agent.agent_id, post.agent_id)
                self._graph_changed = True

    def update_network(self, round: int) -> None:
        """Follow / unfollow (off by default): a like follows the author, a downvote unfollows."""
        if self.config.follow_dynamics and self._graph_changed:
            self._record_edges(round + 1)
            self._graph_changed = False

    def record(self, round: int) -> None:
        """Append this round's posts to the trace."""
        trial_id = self.config.trial_id
        for post in self.platform.posts_of_round(round):
            self.recorder.posts.add(trial_id, round, post.agent_id, post.text, post.stance, post.confidence,
                                    post.parse_ok, post.call_id)

    # -- helpers --------------------------------------------------------------------------------
    def call(self, requests: list[LLMRequest]) -> list[LLMResult]:
        return send_on_record(self.gateway, requests, self.recorder.prompts)

    def _record_edges(self, round: int) -> None:
        for source, target in sorted(self.platform.follow_graph.edges()):
            self.recorder.edges.add(self.config.trial_id, round, source, target)

    def check_exposures(self) -> None:
        """Fail loudly unless every honest feed from round 1 on held exactly one adversary post."""
        expected = self.config.expected_adversarial_impressions
        flags = self.recorder.exposures.column("is_adversarial")
        observed = int(sum(flags))
        if observed != expected:
            raise ExposureCheckError(
                f"trial {self.config.trial_id}: {observed} adversarial impressions, expected {expected}")
