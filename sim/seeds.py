"""Every random number of a trial flows from its one master seed.

Two kinds of seeds come from it:

* **Named random streams** (:class:`RandomStreams`): independent ``numpy`` generators for each use
  (initial stances, persona draw, vote sampling, unranked feeds, network, follow decisions), built from
  ``SeedSequence(master_seed, spawn_key=(stream_index,))``. Adding a stream never changes the others.
  A keyed stream (a thread study's per-thread streams) is ``spawn_key=(stream_index, *key)``.
* **Request seeds** sent with each model call, derived from (trial seed, round, phase, agent ordinal).
  The default formula is PV-SST's ``trial_seed*100000 + round*1000 + phase*500 + ordinal``.

Examples
--------
>>> request_seed(101, round=2, phase=PHASE_POST, ordinal=3)
10102503
>>> a = RandomStreams(7).generator("votes").integers(0, 100, 3)
>>> b = RandomStreams(7).generator("votes").integers(0, 100, 3)
>>> bool((a == b).all())
True
"""
from __future__ import annotations

import hashlib

import numpy as np

from pvsst.core.errors import InputError

PHASE_POST = 1
PHASE_VOTE = 2
PHASE_THREAD_POST = 3
PHASE_COMMENT = 4
PHASE_COMMENT_VOTE = 5

# Stream names are append-only: their index fixes the SeedSequence spawn key.
STREAM_NAMES = ("mesa", "stances", "personas", "votes", "feeds", "network", "follow", "thread_plan",
                "thread_critics", "thread_actions", "thread_lengths", "thread_parents", "thread_votes")

REQUEST_SEED_FORMULAS = ("pvsst", "hashed")


class RandomStreams:
    """Independent, reproducible generators derived from one master seed."""

    def __init__(self, master_seed: int):
        self.master_seed = int(master_seed)

    def seed_sequence(self, name: str, *key: int) -> np.random.SeedSequence:
        """The seed sequence of stream ``name``; ``key`` (e.g. a thread's index) gives independent
        sub-streams of one stream, and the stream without a key is the one it always was."""
        if name not in STREAM_NAMES:
            raise KeyError(f"unknown random stream {name!r}")
        return np.random.SeedSequence(self.master_seed, spawn_key=(STREAM_NAMES.index(name), *map(int, key)))

    def generator(self, name: str, *key: int) -> np.random.Generator:
        return np.random.default_rng(self.seed_sequence(name, *key))


def request_seed(trial_seed: int, round: int, phase: int, ordinal: int, formula: str = "pvsst") -> int:
    """The seed sent with one model call.

    ``pvsst``: PV-SST's ``trial_seed*100000 + round*1000 + phase*500 + ordinal`` (unique while
    ordinal < 500 and round < 100). ``hashed``: the first 31 bits of sha256 over the four numbers,
    unique in practice for populations of any size.
    """
    if formula == "pvsst":
        return int(trial_seed) * 100000 + int(round) * 1000 + int(phase) * 500 + int(ordinal)
    if formula == "hashed":
        digest = hashlib.sha256(f"{trial_seed}:{round}:{phase}:{ordinal}".encode()).digest()
        return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
    raise InputError("trial", "request_seed_formula",
                     f"unknown formula {formula!r} ({', '.join(REQUEST_SEED_FORMULAS)})")
