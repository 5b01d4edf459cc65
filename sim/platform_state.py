"""Platform state: the posts of every round with their like / downvote counts, and the follow graph.

The platform is the append-only trace the feed policies read from. The follow graph is a plain
``networkx.DiGraph`` (edge u -> v: u follows v) owned here, not Mesa's ``Network`` space (which links
cells both ways).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import networkx as nx


@dataclass
class Post:
    """One post as stored on the platform; ``likes`` and ``downvotes`` grow during the vote phase."""

    round: int
    agent_id: str
    label: str
    text: str
    stance: int
    confidence: float
    parse_ok: bool
    is_adversarial: bool
    call_id: str = ""
    likes: int = 0
    downvotes: int = 0


@dataclass
class Platform:
    """Posts by round plus the follow graph over honest agents."""

    follow_graph: nx.DiGraph
    rounds: list[list[Post]] = field(default_factory=list)
    _cache: dict[tuple[str, int], Any] = field(default_factory=dict, repr=False)

    def publish(self, round: int, posts: list[Post]) -> None:
        if round != len(self.rounds):
            raise ValueError(f"round {round} published out of order (expected {len(self.rounds)})")
        self.rounds.append(posts)

    def posts_of_round(self, round: int) -> list[Post]:
        return self.rounds[round] if 0 <= round < len(self.rounds) else []

    def honest_posts(self, round: int) -> list[Post]:
        """Honest posts of a round in agent order (the list is built once per round)."""
        key = ("honest", round)
        if key not in self._cache:
            self._cache[key] = [p for p in self.posts_of_round(round) if not p.is_adversarial]
        return self._cache[key]

    def adversary_posts(self, round: int) -> list[Post]:
        """Adversary posts of a round, sorted by agent id (the rotation order)."""
        return sorted((p for p in self.posts_of_round(round) if p.is_adversarial), key=lambda p: p.agent_id)

    def ranked_honest_posts(self, round: int) -> list[Post]:
        """Honest posts of a finished round sorted by likes (desc) then agent id; computed once."""
        key = ("ranked", round)
        if key not in self._cache:
            self._cache[key] = sorted(self.honest_posts(round), key=lambda p: (-p.likes, p.agent_id))
        return self._cache[key]

    def post_by_author(self, round: int) -> dict[str, Post]:
        """Honest posts of a round keyed by author (computed once per round)."""
        key = ("by_author", round)
        if key not in self._cache:
            self._cache[key] = {p.agent_id: p for p in self.honest_posts(round)}
        return self._cache[key]

    def followees(self, agent_id: str) -> set[str]:
        return set(self.follow_graph.successors(agent_id)) if agent_id in self.follow_graph else set()

    def invalidate_rankings(self) -> None:
        """Forget derived views (call after likes change)."""
        self._cache.clear()
