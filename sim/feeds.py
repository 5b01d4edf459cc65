"""Feed policies: pure functions of (platform, viewer, round, rng) returning the viewer's feed.

Each policy shows posts of the previous round (round 0 has none). ``candidates`` is ``"population"``
(every honest agent but the viewer, PV-SST) or ``"followees"`` (only accounts the viewer follows).

=======================  ===============================================================
policy                   feed
=======================  ===============================================================
none                     nothing (control arm: topic and persona only)
likes                    others' honest posts by likes desc, then agent id; top k; counts shown
likes_hidden             the same order without counts
unranked                 k others' honest posts drawn at random (exposure without ranking)
follows_chronological    posts of followed accounts, newest round first, then agent id
=======================  ===============================================================

Adversarial arms replace the last slot with one adversary post chosen by rotation
``(viewer_ordinal + round + seed) mod n_adversaries`` (:func:`with_adversary_slot`).

Examples
--------
>>> import networkx as nx, numpy as np
>>> from pvsst.sim.platform_state import Platform, Post
>>> platform = Platform(nx.complete_graph(["a0", "a1", "a2"], create_using=nx.DiGraph))
>>> posts = [Post(0, a, "x", f"post {a}", 1, 0.7, True, False, likes=l) for a, l in [("a0", 1), ("a1", 3), ("a2", 3)]]
>>> platform.publish(0, posts)
>>> [item.agent_id for item in likes_feed(platform, Viewer("a2", 2), 1, np.random.default_rng(0), k=5)]
['a1', 'a0']
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pvsst.core.errors import InputError
from pvsst.sim.platform_state import Platform, Post


@dataclass(frozen=True)
class Viewer:
    agent_id: str
    ordinal: int


@dataclass(frozen=True)
class FeedItem:
    """One slot of a rendered feed."""

    agent_id: str
    label: str
    text: str
    likes: int
    is_adversarial: bool
    show_likes: bool


def _item(post: Post, show_likes: bool) -> FeedItem:
    return FeedItem(post.agent_id, post.label, post.text, post.likes, post.is_adversarial, show_likes)


def _candidates(platform: Platform, viewer: Viewer, round: int, candidates: str) -> list[Post]:
    """Previous-round honest posts of others, in likes order (population) or filtered to followees."""
    if candidates == "followees":
        # Only the viewer's followees' posts: cost grows with degree, not population size.
        by_author = platform.post_by_author(round - 1)
        posts = [by_author[a] for a in platform.followees(viewer.agent_id) if a in by_author]
        return sorted(posts, key=lambda p: (-p.likes, p.agent_id))
    return platform.ranked_honest_posts(round - 1)


def _top_k_excluding(posts: list[Post], viewer: str, k: int) -> list[Post]:
    out: list[Post] = []
    for post in posts:
        if post.agent_id != viewer:
            out.append(post)
            if len(out) == k:
                break
    return out


def none_feed(platform: Platform, viewer: Viewer, round: int, rng: np.random.Generator, k: int,
              candidates: str = "population") -> list[FeedItem]:
    """Control: no posts."""
    return []


def likes_feed(platform: Platform, viewer: Viewer, round: int, rng: np.random.Generator, k: int,
               candidates: str = "population") -> list[FeedItem]:
    """Top ``k`` previous-round honest posts of others by likes, then agent id, with counts shown."""
    if round == 0:
        return []
    return [_item(p, True) for p in _top_k_excluding(_candidates(platform, viewer, round, candidates), viewer.agent_id,
                                                     k)]


def likes_hidden_feed(platform: Platform, viewer: Viewer, round: int, rng: np.random.Generator, k: int,
                      candidates: str = "population") -> list[FeedItem]:
    """The likes order without the counts."""
    return [_item_hidden(i) for i in likes_feed(platform, viewer, round, rng, k, candidates)]


def _item_hidden(item: FeedItem) -> FeedItem:
    return FeedItem(item.agent_id, item.label, item.text, item.likes, item.is_adversarial, False)


def unranked_feed(platform: Platform, viewer: Viewer, round: int, rng: np.random.Generator, k: int,
                  candidates: str = "population") -> list[FeedItem]:
    """``k`` previous-round honest posts of others drawn uniformly at random, in draw order."""
    if round == 0:
        return []
    if candidates == "followees":
        by_author = platform.post_by_author(round - 1)
        pool = sorted((by_author[a] for a in platform.followees(viewer.agent_id) if a in by_author),
                      key=lambda p: p.agent_id)
    else:
        pool = platform.honest_posts(round - 1)
    # Draw k + 1 and drop the viewer, so large populations never pay O(n) per viewer.
    draw = min(k + 1, len(pool))
    picks = [pool[i] for i in rng.choice(len(pool), size=draw, replace=False)] if draw else []
    return [_item(p, False) for p in picks if p.agent_id != viewer.agent_id][:k]


def follows_chronological_feed(platform: Platform, viewer: Viewer, round: int, rng: np.random.Generator,
                               k: int, candidates: str = "followees") -> list[FeedItem]:
    """Posts of accounts the viewer follows, newest round first, then agent id; top ``k``."""
    follows = sorted(platform.followees(viewer.agent_id))
    out: list[FeedItem] = []
    for past in range(round - 1, -1, -1):
        by_author = platform.post_by_author(past)
        for author in follows:
            if author in by_author:
                out.append(_item(by_author[author], False))
                if len(out) == k:
                    return out
    return out


FeedPolicy = Callable[..., list[FeedItem]]

FEED_POLICIES: dict[str, FeedPolicy] = {
    "none": none_feed,
    "likes": likes_feed,
    "likes_hidden": likes_hidden_feed,
    "unranked": unranked_feed,
    "follows_chronological": follows_chronological_feed,
}


def get_feed_policy(name: str) -> FeedPolicy:
    if name not in FEED_POLICIES:
        raise InputError("trial", "feed_policy", f"unknown feed policy {name!r} ({', '.join(FEED_POLICIES)})")
    return FEED_POLICIES[name]


def with_adversary_slot(feed: list[FeedItem], adversary_posts: list[Post], viewer: Viewer, round: int,
                        seed: int, k: int) -> list[FeedItem]:
    """The first ``k - 1`` organic items plus exactly one adversary post, chosen by rotation
    ``(viewer_ordinal + round + seed) mod n_adversaries`` over the adversaries sorted by id."""
    if not adversary_posts:
        raise RuntimeError(f"adversarial arm has no adversary post in round {round - 1}")
    chosen = adversary_posts[(viewer.ordinal + round + seed) % len(adversary_posts)]
    return feed[: max(0, k - 1)] + [_item(chosen, feed[0].show_likes if feed else True)]
