"""Experimental arms: each condition is a feed policy plus an optional adversary mode.

PV-SST's four arms are ``control`` (no feed), ``likes`` (likes-ranked peer feed), ``single_source`` and
``distributed_sources`` (the likes feed with its last slot given to one of 1 or 4 adversary accounts).
pvsst adds ``likes_hidden`` (same order, no counts), ``unranked`` (random peer posts: exposure without
ranking) and ``follows`` (chronological posts of followed accounts).

Examples
--------
>>> get_condition("distributed_sources")
Condition(name='distributed_sources', feed_policy='likes', adversary_mode='distributed_sources', n_adversaries=4)
>>> get_condition("control").adversarial
False
"""
from __future__ import annotations

from dataclasses import dataclass

from pvsst.core.errors import InputError


@dataclass(frozen=True)
class Condition:
    name: str
    feed_policy: str
    adversary_mode: str | None = None
    n_adversaries: int = 0

    @property
    def adversarial(self) -> bool:
        return self.n_adversaries > 0


CONDITIONS: dict[str, Condition] = {
    c.name: c
    for c in (
        Condition("control", "none"),
        Condition("likes", "likes"),
        Condition("likes_hidden", "likes_hidden"),
        Condition("unranked", "unranked"),
        Condition("follows", "follows_chronological"),
        Condition("single_source", "likes", "single_source", 1),
        Condition("distributed_sources", "likes", "distributed_sources", 4),
    )
}


def get_condition(name: str, n_distributed_sources: int = 4) -> Condition:
    """The condition called ``name``; ``n_distributed_sources`` resizes the distributed arm."""
    if name not in CONDITIONS:
        raise InputError("condition", name, f"unknown condition (known: {', '.join(CONDITIONS)})")
    condition = CONDITIONS[name]
    if condition.adversary_mode == "distributed_sources" and n_distributed_sources != 4:
        condition = Condition(name, condition.feed_policy, condition.adversary_mode, n_distributed_sources)
    return condition
